import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Span, type Tracer } from '@opentelemetry/api';
import type { Config } from '../config/schema.ts';
import { parseTraceparent, traceparentOf } from './traceparent.ts';

/** A request's span, given to the transport that traces it. */
export interface RequestTrace {
  readonly span: Span;
  /** A step of the request passed (transport steps and pipeline stages), as an event: no span, no context switch. */
  step(name: string, attributes?: Record<string, string>): void;
  /** A single request's cache outcome (`X-Cache`). */
  cached(outcome: string | undefined): void;
  /** Its end; `status`: the HTTP response's (absent for a WebSocket message). */
  end(status?: number): void;
}

/** One call to one upstream (an attempt: first, hedge, retry, piece of a split eth_getLogs). */
export interface AttemptTrace {
  /** The W3C `traceparent` to send with it: this attempt's span, in the request's trace. */
  readonly traceparent: string;
  end(outcome: string, error?: unknown): void;
}

/**
 * What the request path asks of tracing. Decided once at start (`startTracing`): while off, `request` returns
 * undefined at once, so no call carries a trace and no `attempt` is asked for: a request allocates nothing for
 * tracing (as pino's disabled levels are no-op functions). A module binding rather than a dependency passed down:
 * the upstream clients are built in many places (networks, embedded chains, workers) and need only this.
 */
export interface Tracing {
  readonly on: boolean;
  /** Traced requests' upstream calls carry their attempt's `traceparent` (tracing.sendTraceparent). */
  readonly sendsTraceparent: boolean;
  /** A request's span when it is sampled (`network`, the path's first segment, as given). */
  request(name: string, traceparent: string | string[] | undefined, network: string): RequestTrace | undefined;
  /** An upstream attempt of traced request `parent` (its calls' signals carry it: CallSignal.trace). */
  attempt(parent: RequestTrace, upstream: string, method: string): AttemptTrace;
  shutdown(): Promise<void>;
}

const OFF: Tracing = {
  on: false,
  sendsTraceparent: false,
  request: () => undefined,
  attempt: () => { throw new Error('no traced request while tracing is off'); },
  shutdown: () => Promise.resolve(),
};

/** The process's tracing; off until `startTracing` with `tracing.enabled`. */
export let tracing: Tracing = OFF;

/** Builds the exporter and the sampler once; returns (and installs) the no-op object when tracing is off. */
export async function startTracing(config: Readonly<Config['tracing']>): Promise<Tracing> {
  if (!config.enabled) return (tracing = OFF);
  const { openTracer } = await import('./exporter.ts');
  const { tracer, shutdown } = openTracer(config);
  return (tracing = onTracing(tracer, config, shutdown));
}

/** Tracing with `tracer`, sampled by `config` (exported for tests that bring their own exporter). */
export function onTracing(tracer: Tracer, config: Readonly<Config['tracing']>, shutdown: () => Promise<void>): Tracing {
  const bound = Math.floor(config.sampleRatio * 0x1_0000_0000);
  return {
    on: true,
    sendsTraceparent: config.sendTraceparent,
    request(name, header, network) {
      const caller = typeof header === 'string' ? parseTraceparent(header) : undefined;
      // A trusted caller (a proxy, a mesh) decides; else chance does, not the trace id, which a caller could pick
      // to have every request of theirs traced.
      if (caller !== undefined && config.followCallerSampled) {
        if ((caller.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
      } else if (Math.random() * 0x1_0000_0000 >= bound) return undefined;
      const parent = caller ? trace.setSpanContext(ROOT_CONTEXT, caller) : ROOT_CONTEXT;
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: { 'nodegate.network': network } }, parent);
      const t: RequestTrace = {
        span,
        step: (step, attributes) => void span.addEvent(step, attributes),
        cached: (outcome) => void (outcome !== undefined && span.setAttribute('nodegate.cache', outcome)),
        end(status) {
          if (status !== undefined) span.setAttribute('http.response.status_code', status);
          if (status !== undefined && status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
      return t;
    },
    attempt(parent, upstream, method) {
      const span = tracer.startSpan(`upstream ${method}`, { kind: SpanKind.CLIENT, attributes: { 'nodegate.upstream': upstream, 'rpc.method': method } }, trace.setSpan(ROOT_CONTEXT, parent.span));
      return {
        traceparent: traceparentOf(span.spanContext()),
        end(outcome, error) {
          span.setAttribute('nodegate.outcome', outcome);
          if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          span.end();
        },
      };
    },
    async shutdown() {
      // The process's binding goes back to off with the gateway that set it (tests start several in one process).
      tracing = OFF;
      await shutdown();
    },
  };
}
