// @ts-check
// Actions on a webhook shared by the list and the detail page: a test event with its feedback, and the secret's
// rotation (POST /webhooks/{id}/secret; an older gateway has it as /rotate-secret).
import { api, ApiFailure } from './api.js';

/** @param {string} id @returns {Promise<string>} the new secret */
export async function rotateSecret(id) {
  const path = `/webhooks/${encodeURIComponent(id)}`;
  try {
    return /** @type {{ secret: string }} */ (await api('POST', `${path}/secret`)).secret;
  } catch (err) {
    if (!(err instanceof ApiFailure && err.missingRoute)) throw err;
    return /** @type {{ secret: string }} */ (await api('POST', `${path}/rotate-secret`)).secret;
  }
}

/** Sends a test event; the words to show. @param {string} id */
export async function sendTest(id) {
  const r = /** @type {{ id?: string }} */ (await api('POST', `/webhooks/${encodeURIComponent(id)}/test`));
  return `Test event ${r?.id ? `${r.id.slice(0, 18)}… ` : ''}queued: it is delivered within a moment; see it under Deliveries.`;
}
