import * as z from 'zod';

/**
 * The messages between the claude launcher (client.ts) and the daemon (server.ts): one JSON
 * object per line each way, one request per connection.
 */

const base = { protocol: z.number().int(), build: z.string() };

/** An event: what the launcher's process would have decided itself. */
export const eventRequestSchema = z.object({
  ...base,
  op: z.literal('event'),
  /**
   * Epoch ms after which the daemon must not start deciding (it replies `late`): the launcher
   * stops waiting for the acknowledgement (ACK, sent before deciding) a little after this and
   * decides in process, so an event is never decided twice because the daemon was slow to read it.
   */
  acceptUntil: z.number(),
  argv: z.array(z.string()),
  cwd: z.string().min(1),
  env: z.record(z.string(), z.string()),
  stdin: z.string(),
});

export const daemonRequestSchema = z.discriminatedUnion('op', [
  eventRequestSchema,
  z.object({ ...base, op: z.literal('status') }),
  z.object({ ...base, op: z.literal('stop') }),
]);

export type EventRequest = z.infer<typeof eventRequestSchema>;
export type DaemonRequest = z.infer<typeof daemonRequestSchema>;

/** The event decided: what to write and the exit code. */
export interface AnswerReply {
  ok: true;
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Not decided here; the launcher decides in process. `stale`: a file of a loaded hook set
 * changed (the daemon is exiting; the launcher starts a fresh one). `version`: another protocol
 * or build. `late`: it read the request after its `acceptUntil`. `busy` (the launcher's own,
 * never sent): no acknowledgement in time. `bad-request`, `closing`: what they say.
 */
export interface RefusalReply {
  ok: false;
  reason: 'stale' | 'version' | 'bad-request' | 'closing' | 'late' | 'busy';
}

/** `hookledger daemon status`. */
export interface StatusReply {
  ok: true;
  /** The agent command it runs (claude, codex, gemini). */
  agent: string;
  pid: number;
  build: string;
  node: string;
  startedAt: number;
  events: number;
  inFlight: number;
  idleMs: number;
  ledgers: string[];
  configs: string[];
}

/** The most a request may hold (stdin is capped at 16 MiB; JSON escaping and the environment add to it). */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
