import type { SpanContext } from '@opentelemetry/api';

/** W3C Trace Context §3.2: version 00 (a later version's first four fields read the same), ids not all zeros. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZEROS_32 = '0'.repeat(32);
const ZEROS_16 = '0'.repeat(16);

/** The caller's span context from its `traceparent`; undefined when the header is not one (it is then ignored). */
export function parseTraceparent(header: string): SpanContext | undefined {
  const m = TRACEPARENT.exec(header.trim());
  if (!m || m[1] === 'ff' || m[2] === ZEROS_32 || m[3] === ZEROS_16 || (m[1] === '00' && m[5] !== undefined)) return undefined;
  return { traceId: m[2], spanId: m[3], traceFlags: Number.parseInt(m[4], 16), isRemote: true };
}

/** The `traceparent` naming `ctx` as the parent of the next hop, sampled (only sampled spans are made). */
export const traceparentOf = (ctx: SpanContext): string => `00-${ctx.traceId}-${ctx.spanId}-01`;
