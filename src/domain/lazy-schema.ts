import type * as z from 'zod';

/**
 * A zod schema built on its first use rather than when its module loads. `hookledger claude`
 * is a process per event that loads every module of its bundle and builds each module-level
 * schema, about 1 ms of CPU per hundred zod instances, while one event uses a few of them (a
 * hook answers with one decision; Claude-protocol command hooks are rare). Types still come
 * from the schema: `z.output<ReturnType<typeof mySchema>>`.
 */
export function lazySchema<T extends z.ZodType>(build: () => T): () => T {
  let schema: T | undefined;
  return () => (schema ??= build());
}
