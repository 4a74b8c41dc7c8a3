declare module 'parse-prometheus-text-format' {
  /** One sample: a value, or a histogram's buckets, count and sum (prom2json's shape). */
  export interface PrometheusSample {
    readonly labels?: Record<string, string>;
    readonly value?: string;
    readonly buckets?: Record<string, string>;
    readonly count?: string;
    readonly sum?: string;
    readonly quantiles?: Record<string, string>;
  }
  /** One metric family. */
  export interface PrometheusFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: PrometheusSample[];
  }
  /** Parses the Prometheus text exposition format. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
