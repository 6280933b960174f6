/**
 * The patch's entries that an update may set: those named in `fields` (never an id or a timestamp, whatever reaches
 * us at run time) and not `undefined` (a `Partial` may spell "not given" either way).
 */
export function given<T extends object>(patch: T, fields: readonly string[]): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([f, v]) => v !== undefined && fields.includes(f))) as Partial<T>;
}
