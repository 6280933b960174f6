import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config/schema.ts';

/**
 * The SDK's tracer, exporting by OTLP/HTTP (JSON) in batches. It samples everything it is given: tracing.ts decides
 * before any span is made, so an unsampled request makes no span object. Loaded only when tracing is on.
 */
export function openTracer(config: Readonly<Config['tracing']>): { tracer: Tracer; flush: () => Promise<void>; shutdown: () => Promise<void> } {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpUrl }), { scheduledDelayMillis: 1000 })],
  });
  return { tracer: provider.getTracer('nodegate'), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

