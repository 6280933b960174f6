/**
 * The UTC minute of `t`, `YYYY-MM-DDTHH:MM`: the key of a usage row (minute rows, and hour rows as `HH:00`), so
 * the recorder that writes rows, the retention job that rolls them up and the readers that ask for ranges agree.
 */
export const minuteOf = (t: number) => new Date(t).toISOString().slice(0, 16);
