import { InputError } from '../../domain/errors.js';

/** A page request: keyset (`cursor`, stable under concurrent writes) or `offset` (not stable). */
export interface PageRequest {
  /** Rows per page, 1..10000. */
  limit: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string | null;
  /** Rows to skip; shifts when invocations are recorded between pages, so rows can repeat. */
  offset?: number;
}

export const MAX_PAGE_LIMIT = 10_000;

/**
 * Cursors are opaque to callers but only encode the last id seen and which listing it came
 * from, so that a cursor from one listing is not silently misread by another.
 */
export function encodeCursor(kind: string, id: number, top?: number): string {
  return Buffer.from(top === undefined ? `${kind}:${id}` : `${kind}:${id}:${top}`, 'utf8').toString('base64url');
}

export function decodeCursor(kind: string, cursor: string, flag = 'cursor'): number {
  return decodeCursorParts(kind, cursor, flag).id;
}

/**
 * The id where the previous page stopped and, for listings that need it, `top`: the newest id
 * the first page saw, so that later pages can tell rows walked before from rows recorded since.
 */
export function decodeCursorParts(kind: string, cursor: string, flag = 'cursor'): { id: number; top: number | null } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^([a-z]+):(\d{1,15})(?::(\d{1,15}))?$/.exec(text);
  if (!match || match[1] !== kind) {
    throw new InputError(`${flag}: "${cursor}" is not a cursor from a previous page of this listing`);
  }
  return { id: Number(match[2]), top: match[3] === undefined ? null : Number(match[3]) };
}

/** Validates limit/offset/cursor; returns the normalised values. */
export function checkPage(page: PageRequest, kind: string): { limit: number; offset: number; after: number | null } {
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE_LIMIT) {
    throw new InputError(`limit: expected a whole number from 1 to ${MAX_PAGE_LIMIT}, got ${page.limit}`);
  }
  const offset = page.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) throw new InputError(`offset: expected a whole number >= 0, got ${offset}`);
  const cursor = page.cursor ?? null;
  if (cursor !== null && offset > 0) throw new InputError('offset: give either a cursor or an offset, not both');
  return { limit: page.limit, offset, after: cursor === null ? null : decodeCursor(kind, cursor) };
}
