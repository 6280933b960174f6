/**
 * Offers `perSecond` requests a second for `seconds`, evenly spaced (not as fast as possible, so the limiter
 * sees a steady 3N and not a burst), and resolves when every answer is in. `send(i)` makes request i and tells
 * whether it was admitted. Returns how many were admitted, and the elapsed time in seconds.
 */
export async function offerLoad(perSecond: number, seconds: number, send: (i: number) => Promise<boolean>): Promise<{ admitted: number; elapsed: number }> {
  const start = Date.now();
  let admitted = 0;
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < perSecond * seconds; i++) {
    const wait = start + (i * 1000) / perSecond - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(send(i).then((ok) => { if (ok) admitted++; }));
  }
  await Promise.all(inflight);
  return { admitted, elapsed: (Date.now() - start) / 1000 };
}
