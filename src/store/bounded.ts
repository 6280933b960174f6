/**
 * `p`, or a rejection once `ms` have passed: how long a caller waits for the store, as opposed to how long the
 * store's own work may run (the driver's query and connect time-outs end that).
 */
export function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
