/**
 * The HTTP floor of `BENCH_ONLY=serve npm run bench:claude`: a plain node:http server answering
 * POST /claude with a fixed deny after parsing the body, optionally doing the write floor's two
 * durable transactions per request (bench-write-floor.ts, same checkpointing as serve). Measured
 * with the same bare-socket client as serve, it is what two processes ping-ponging over
 * loopback on this machine cost, with and without the writes: no hooks, validation, redaction.
 *
 *   node --import tsx scripts/bench-http-floor.ts <package dir> [<served ledger> <floor ledger>]
 */
import { createServer } from 'node:http';
import { floorWriter } from './bench-write-floor.js';

const [packageDir, servedDb, floorDb] = process.argv.slice(2);
const writer = servedDb !== undefined && floorDb !== undefined ? await floorWriter(packageDir!, servedDb, floorDb) : null;
const answer = (decision: string) =>
  JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: 'no rm -rf' },
  });

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { tool_input?: { command?: unknown } };
    const decision = String(payload.tool_input?.command ?? '').includes('rm -rf') ? 'deny' : 'allow';
    writer?.once();
    const body = answer(decision);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void (writer?.close() ?? Promise.resolve()).then(() => process.exit(0));
});
