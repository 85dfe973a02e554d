import { userInfo } from 'node:os';
import { NotFoundError, OptionError } from '../domain/errors.js';
import type { Ledger } from './open.js';
import { prepared } from './statements.js';

/** A session that `prune` must keep. */
export interface LegalHold {
  sessionId: string;
  reason: string;
  heldBy: string;
  /** ms since the epoch. */
  createdAt: number;
  /** Invocations of the session in the ledger now. */
  invocations: number;
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/**
 * Places (or updates the reason of) a legal hold on a session. The session need not exist yet.
 * @throws OptionError (`sessionId`, `reason`) when either is blank.
 */
export function placeHold(ledger: Ledger, sessionId: string, reason: string, heldBy = currentUser()): LegalHold {
  if (sessionId.trim() === '') throw new OptionError('sessionId', 'must not be blank');
  if (reason.trim() === '') throw new OptionError('reason', 'must say why the session is held (e.g. a case number)');
  prepared(
    ledger,
    `INSERT INTO legal_holds (session_id, reason, held_by, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session_id) DO UPDATE SET reason = excluded.reason, held_by = excluded.held_by`,
  ).run(sessionId, reason, heldBy, Date.now());
  return listHolds(ledger).find((h) => h.sessionId === sessionId)!;
}

/** Releases a hold; NotFoundError when the session is not held. */
export function releaseHold(ledger: Ledger, sessionId: string): void {
  const { changes } = prepared(ledger, 'DELETE FROM legal_holds WHERE session_id = ?').run(sessionId);
  if (changes === 0) throw new NotFoundError(`session "${sessionId}" is not under legal hold in ${ledger.path}`);
}

/** Every hold, oldest first. */
export function listHolds(ledger: Ledger): LegalHold[] {
  return prepared<[], LegalHold>(
    ledger,
    `SELECT h.session_id AS sessionId, h.reason, h.held_by AS heldBy, h.created_at AS createdAt,
       (SELECT count(*) FROM invocations i WHERE i.session_id = h.session_id) AS invocations
     FROM legal_holds h ORDER BY h.created_at, h.session_id`,
  ).all();
}
