import { AsyncLocalStorage } from 'node:async_hooks';

/** The environment and working directory of the agent process an event came from. */
export interface EventEnvironment {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * A long-lived process that decides events for many short-lived clients (the claude daemon,
 * src/cli/daemon/) runs each event inside its client's environment, so that the command hooks it
 * starts get the agent's variables and directory, not the daemon's. Everywhere else (a process
 * per event, serve) there is no store and the process's own are used.
 */
const current = new AsyncLocalStorage<EventEnvironment>();

/** Runs `fn` (and everything it starts, background work included) in an event's environment. */
export function withEventEnvironment<T>(environment: EventEnvironment, fn: () => T): T {
  return current.run(environment, fn);
}

/** The environment hooks of the current event inherit: its client's, else this process's. */
export function eventEnv(): NodeJS.ProcessEnv {
  return current.getStore()?.env ?? process.env;
}

/** The directory of the current event's client, else this process's. */
export function eventCwd(): string {
  return current.getStore()?.cwd ?? process.cwd();
}
