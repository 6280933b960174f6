import type { PlanLimits } from '../../config/plan-limits.ts';

/** A plan: its limits are defined once, with their bounds and defaults, in config/plan-limits.ts. */
export interface Plan extends PlanLimits {
  /** Slug, e.g. `free`; also the plan's name in configuration. */
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}
