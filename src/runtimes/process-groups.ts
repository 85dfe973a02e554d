/**
 * The process groups of command hooks that are still running, so a hookledger process that
 * is told to stop (Claude Code's timeout kills it with a signal) can take them down first.
 * Each hook runs detached in its own group, so nothing else would: without this they keep
 * running, orphaned, after the answer they were computing has been thrown away. Kept apart
 * from `command.ts` so a signal handler can use it without loading `child_process`.
 */

const live = new Set<number>();

/** Records a hook's process group (its leader's pid) as running. */
export function trackProcessGroup(pid: number): void {
  live.add(pid);
}

/** Forgets a group once it has been killed; its id may be reused by an unrelated group after that. */
export function untrackProcessGroup(pid: number): void {
  live.delete(pid);
}

/** SIGKILL to the whole process group; best effort, the group may already be gone. */
export function killProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left to kill; EPERM: the id now belongs to someone else's group. Either
    // way there is nothing more to do, and throwing from an event handler would crash us.
  }
}

/**
 * Kills the process group of every command hook still running in this process and
 * forgets them. Synchronous, so it can run in a signal handler right before `process.exit`.
 * Returns how many groups were signalled.
 *
 * @returns the number of process groups that were still registered
 */
export function killRunningHookProcesses(): number {
  const groups = [...live];
  live.clear();
  for (const pid of groups) killProcessGroup(pid);
  return groups.length;
}
