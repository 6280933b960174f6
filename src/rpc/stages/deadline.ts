import { untilAborted } from '../deadline.ts';
import type { Stage } from '../call.ts';

/** Stage `deadline`: the call is answered -32015 at its budget's end, whatever a stage below does with its signal. */
export const deadlineStage: Stage = (call, next) => untilAborted(next(call), call.signal);
