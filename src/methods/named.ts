/**
 * Method names the gateway writes itself, rather than reads from a caller: kept here so that no module outside
 * src/methods spells a method's name to decide something (test/architecture.test.ts).
 */

/** The method of a subscription's notification (geth's pub/sub): on the wire, and as usage counts it. */
export const NOTIFICATION_METHOD = 'eth_subscription';

/** The call the start banner and `nodegate keys create` show as a first try (any key, any plan may make it). */
export const EXAMPLE_METHOD = 'eth_blockNumber';
