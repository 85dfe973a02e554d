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
 * The statements of legal holds, shared by both engines (PostgreSQL numbers the `?`
 * placeholders: ledger/postgres/holds.ts). Parameters: session id, reason, held by, created at.
 */
export const HOLD_SQL = {
  place: `INSERT INTO legal_holds (session_id, reason, held_by, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session_id) DO UPDATE SET reason = excluded.reason, held_by = excluded.held_by`,
  release: 'DELETE FROM legal_holds WHERE session_id = ?',
  list: `SELECT h.session_id AS "sessionId", h.reason, h.held_by AS "heldBy", h.created_at AS "createdAt",
       (SELECT count(*) FROM invocations i WHERE i.session_id = h.session_id) AS invocations
     FROM legal_holds h ORDER BY h.created_at, h.session_id`,
} as const;

/**
 * The arguments of a hold, checked alike on every engine; `heldBy` defaults to the OS user.
 * @throws OptionError (`sessionId`, `reason`) when either is blank.
 */
export function holdArguments(sessionId: string, reason: string, heldBy = currentUser()): [string, string, string] {
  if (sessionId.trim() === '') throw new OptionError('sessionId', 'must not be blank');
  if (reason.trim() === '') throw new OptionError('reason', 'must say why the session is held (e.g. a case number)');
  return [sessionId, reason, heldBy];
}

/** What `releaseHold` throws when the session is not held. */
export function notHeld(sessionId: string, location: string): NotFoundError {
  return new NotFoundError(`session "${sessionId}" is not under legal hold in ${location}`);
}

/**
 * Places (or updates the reason of) a legal hold on a session. The session need not exist yet.
 * @throws OptionError (`sessionId`, `reason`) when either is blank.
 */
export function placeHold(ledger: Ledger, sessionId: string, reason: string, heldBy?: string): LegalHold {
  const values = holdArguments(sessionId, reason, heldBy);
  prepared(ledger, HOLD_SQL.place).run(...values, Date.now());
  return listHolds(ledger).find((h) => h.sessionId === sessionId)!;
}

/** Releases a hold; NotFoundError when the session is not held. */
export function releaseHold(ledger: Ledger, sessionId: string): void {
  const { changes } = prepared(ledger, HOLD_SQL.release).run(sessionId);
  if (changes === 0) throw notHeld(sessionId, ledger.path);
}

/** Every hold, oldest first. */
export function listHolds(ledger: Ledger): LegalHold[] {
  return prepared<[], LegalHold>(ledger, HOLD_SQL.list).all();
}
