/**
 * What a command-hook adapter hands back to its agent for one event: the stdout JSON (null =
 * print nothing), the exit code, and one stderr line. The CLI prints it; nothing else is written.
 */
export interface AgentAnswer {
  exitCode: 0 | 2;
  /** Exactly one JSON object for stdout, or null for an empty stdout ("no opinion"). */
  json: Record<string, unknown> | null;
  /** The block reason on exit 2, else a log line (or null). */
  stderr: string | null;
}
