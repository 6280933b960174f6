/** The Prometheus text-format parser the metrics test reads /metrics with (the package ships no types). */
declare module 'parse-prometheus-text-format' {
  export default function parse(text: string): Array<{ name: string; type: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> }>;
}
