/** The part of autocannon's API the bench uses (the package ships no types, and @types/autocannon is not installed). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (
        req: Record<string, unknown>,
        context: Record<string, unknown>,
      ) => Record<string, unknown> | undefined;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      pipelining?: number;
      timeout?: number;
      overallRate?: number;
      connectionRate?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
    }
    interface Histogram {
      average: number;
      mean: number;
      p50: number;
      p99: number;
      max: number;
      total: number;
    }
    interface Result {
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
      duration: number;
    }
    type Instance = EventEmitter & PromiseLike<Result> & { stop(): void };
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
