import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The session cookie's name. */
export const COOKIE = 'hookledger_console';

/** How long a login lasts without use. */
const IDLE_MS = 12 * 3_600_000;

/**
 * Logins of one console process: the token is exchanged once for a random session id kept
 * only in memory (restarting the console logs everyone out), sent back as an HttpOnly,
 * SameSite=Strict cookie so that scripts cannot read it and other sites cannot ride on it.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, number>();
  private readonly tokenDigest: Buffer;

  constructor(token: string) {
    this.tokenDigest = digest(token);
  }

  /** Whether `given` is the token (compared in constant time, over digests so lengths do not leak). */
  checkToken(given: string): boolean {
    return timingSafeEqual(digest(given), this.tokenDigest);
  }

  /** A new session id. */
  create(now = Date.now()): string {
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, now);
    return id;
  }

  /** Whether the Cookie header carries a live session (refreshing its idle time). */
  valid(cookieHeader: string | undefined, now = Date.now()): boolean {
    const id = cookieValue(cookieHeader, COOKIE);
    if (id === null) return false;
    const seen = this.sessions.get(id);
    if (seen === undefined) return false;
    if (now - seen > IDLE_MS) {
      this.sessions.delete(id);
      return false;
    }
    this.sessions.set(id, now);
    return true;
  }

  end(cookieHeader: string | undefined): void {
    const id = cookieValue(cookieHeader, COOKIE);
    if (id !== null) this.sessions.delete(id);
  }
}

/** The Set-Cookie value for a session (`Secure` is left out: the console serves plain HTTP on loopback). */
export function sessionCookie(id: string): string {
  return `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict`;
}

export function clearedCookie(): string {
  return `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
    }
  }
  return null;
}
