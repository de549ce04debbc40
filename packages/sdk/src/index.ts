/**
 * @automation/sdk — a typed client of the Automation Service API, generated from its OpenAPI
 * document, with the three SSE streams as async iterators and a webhook signature verifier.
 */
export {
  createClient,
  type AutomationClient,
  type ClientOptions,
  type OperationInit,
  type OperationMethods,
  type OperationResult,
  type Schemas,
  type Tokens,
} from './client.ts';
export { ApiError, type ErrorBody } from './errors.ts';
export {
  streamAgentRunEvents,
  streamOrgEvents,
  streamRunEvents,
  type AgentRunSummary,
  type AgentStep,
  type AgentStreamEvent,
  type ExecutionEvent,
  type OrgStreamEvent,
  type PlatformEvent,
  type ReplayOptions,
  type RunStreamEvent,
  type StreamOptions,
} from './streams.ts';
export {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WebhookVerificationError,
  signWebhook,
  verifyWebhook,
  type HeaderSource,
  type VerifyOptions,
  type WebhookDelivery,
  type WebhookVerificationCode,
} from './webhooks.ts';
export { operations, type OperationId } from './generated/operations.ts';
export type { components, operations as OperationTypes, paths } from './generated/openapi.ts';
