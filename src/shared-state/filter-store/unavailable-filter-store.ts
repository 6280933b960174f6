import { GatewayError } from '../../errors/gateway-error.ts';
import type { FilterStore } from './filter-store.ts';

const unavailable = async (): Promise<never> => {
  throw new GatewayError('FILTERS_UNAVAILABLE', { detail: 'the shared filter store did not answer' });
};

/**
 * What filter calls get while the shared filter store (Redis, or the workers' primary) does not answer: -32002
 * filters_unavailable, at once, and nothing else of the gateway is affected. A filter lives in the shared store
 * only: an instance that made filters of its own meanwhile would hand out ids that no other instance knows, and
 * lose them when the store came back.
 */
export const UNAVAILABLE_FILTERS: FilterStore = {
  add: unavailable,
  get: unavailable,
  update: unavailable,
  remove: unavailable,
  noteSent: unavailable,
  sentSince: unavailable,
  size: 0,
  close: async () => {},
};
