import { startCli, type StartedCli } from '../cli-helpers.js';

/** A `hookledger serve` child process and where it listens. */
export interface ServeProcess {
  cli: StartedCli;
  /** `http://127.0.0.1:<port>` */
  url: string;
}

/**
 * Starts the real `hookledger serve` (from source) on a free port with a fixed token, and resolves
 * once it prints its address (`--json`). Rejects with its stderr if it exits first.
 */
export async function startServe(config: string, db: string, token: string, env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const cli = startCli(['serve', '--config', config, '--db', db, '--port', '0', '--json', '--token', token], { env });
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      if (cli.output.stdout.includes('\n')) {
        clearInterval(poll);
        resolve((JSON.parse(cli.output.stdout.split('\n')[0]!) as { url: string }).url);
      }
    }, 20);
    void cli.exited.then(() => {
      clearInterval(poll);
      reject(new Error(`serve exited before listening: ${cli.output.stderr}`));
    });
  });
  return { cli, url };
}

/** Stops a serve process (SIGKILL: tests that need a graceful stop send SIGTERM themselves). */
export async function stopServe(serve: ServeProcess): Promise<void> {
  if (serve.cli.child.exitCode === null && serve.cli.child.signalCode === null) serve.cli.child.kill('SIGKILL');
  await serve.cli.exited;
}
