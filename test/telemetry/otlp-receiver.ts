import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A real OTLP/HTTP receiver for tests: decodes the JSON the OpenTelemetry exporters send to
 * /v1/traces and /v1/logs (the OTLP JSON encoding: attributes as key/value lists, ids as hex).
 */

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status: { code?: number; message?: string };
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

export interface ReceivedLog {
  eventName: string;
  traceId: string;
  spanId: string;
  severityText: string;
  body: string;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  logs: ReceivedLog[];
  /** Every raw body received (to check that no secret went out). */
  bodies: string[];
  close(): Promise<void>;
}

function value(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return JSON.stringify(v);
}

function attributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** Starts a receiver on 127.0.0.1 (a free port). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      const text = raw.toString('utf8');
      bodies.push(text);
      const body = JSON.parse(text) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans: { spans: (Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: KeyValue[] })[] }[];
        }[];
        resourceLogs?: {
          resource?: { attributes?: KeyValue[] };
          scopeLogs: {
            logRecords: (Omit<ReceivedLog, 'attributes' | 'resource' | 'body'> & { attributes?: KeyValue[]; body?: AnyValue })[];
          }[];
        }[];
      };
      if (req.url === '/v1/traces') {
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributes(rs.resource?.attributes);
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                ...s,
                parentSpanId: s.parentSpanId ?? '',
                status: s.status ?? {},
                attributes: attributes(s.attributes),
                resource,
              });
        }
      } else if (req.url === '/v1/logs') {
        for (const rl of body.resourceLogs ?? []) {
          const resource = attributes(rl.resource?.attributes);
          for (const sl of rl.scopeLogs) {
            for (const l of sl.logRecords)
              logs.push({ ...l, body: l.body ? String(value(l.body)) : '', attributes: attributes(l.attributes), resource });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    logs,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
