/**
 * Plans (CONTRACT §12): what an operator hosting the service for several customers sells. `PLANS`
 * (JSON) names each plan's features and limits; pure data and its parser, read by src/config.ts.
 */

export const FEATURES = ['workflows', 'agents', 'content', 'conversations', 'campaigns', 'analytics', 'webhooks'] as const;
export type Feature = (typeof FEATURES)[number];

/** Limits on what an organization holds (checked when one more is created). */
export const COUNT_LIMITS = ['leads', 'members', 'webhookEndpoints', 'inboxes'] as const;
/** Limits on what an organization starts or sends in a calendar month (UTC). */
export const MONTHLY_LIMITS = ['runsPerMonth', 'agentRunsPerMonth', 'campaignMessagesPerMonth'] as const;
export const LIMITS = [...COUNT_LIMITS, ...MONTHLY_LIMITS] as const;
export type CountLimit = (typeof COUNT_LIMITS)[number];
export type MonthlyLimit = (typeof MONTHLY_LIMITS)[number];
export type LimitName = (typeof LIMITS)[number];

export interface PlanDefinition {
  features: Feature[];
  /** Only the limits the plan sets; a missing one is unlimited. */
  limits: Partial<Record<LimitName, number>>;
}

export type Plans = Record<string, PlanDefinition>;

/** The plan of every organization when no `PLANS` are configured. */
export const UNLIMITED = 'unlimited';

export class PlansConfigError extends Error {}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Parses and checks `PLANS` and `DEFAULT_PLAN`; every problem names the part that is wrong. */
export function parsePlans(raw: string | undefined, defaultPlan: string | undefined): { plans: Plans | null; defaultPlan: string | null } {
  if (raw === undefined) {
    if (defaultPlan !== undefined) throw new PlansConfigError(`DEFAULT_PLAN is "${defaultPlan}" but PLANS is not set: set PLANS, or unset DEFAULT_PLAN`);
    return { plans: null, defaultPlan: null };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new PlansConfigError(`PLANS must be JSON { "<plan>": { "features": [...], "limits": { ... } } }: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new PlansConfigError('PLANS must be a JSON object of plans: { "<plan>": { "features": [...], "limits": { ... } } }');
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 0) throw new PlansConfigError('PLANS names no plan: define at least one, or unset PLANS');
  const plans: Plans = {};
  for (const [name, value] of entries) {
    const where = `PLANS["${name}"]`;
    if (!NAME.test(name)) throw new PlansConfigError(`${where}: a plan name is 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new PlansConfigError(`${where} must be an object { "features": [...], "limits": { ... } }`);
    const { features = [], limits = {}, ...rest } = value as { features?: unknown; limits?: unknown };
    const extra = Object.keys(rest);
    if (extra.length) throw new PlansConfigError(`${where} has unknown key(s) ${extra.map((k) => `"${k}"`).join(', ')}; allowed: "features", "limits"`);
    if (!Array.isArray(features) || features.some((f) => typeof f !== 'string'))
      throw new PlansConfigError(`${where}.features must be an array of feature names (${FEATURES.join(', ')})`);
    const unknown = (features as string[]).filter((f) => !(FEATURES as readonly string[]).includes(f));
    if (unknown.length)
      throw new PlansConfigError(`${where}.features: unknown feature(s) ${unknown.map((f) => `"${f}"`).join(', ')}; allowed: ${FEATURES.join(', ')}`);
    if (!limits || typeof limits !== 'object' || Array.isArray(limits))
      throw new PlansConfigError(`${where}.limits must be an object { "<limit>": n } (${LIMITS.join(', ')})`);
    const out: PlanDefinition['limits'] = {};
    for (const [limit, n] of Object.entries(limits as Record<string, unknown>)) {
      if (!(LIMITS as readonly string[]).includes(limit))
        throw new PlansConfigError(`${where}.limits: unknown limit "${limit}"; allowed: ${LIMITS.join(', ')}`);
      if (n === null) continue;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 2_000_000_000) {
        throw new PlansConfigError(`${where}.limits.${limit} must be a whole number from 0 to 2000000000 (or null for none), got ${JSON.stringify(n)}`);
      }
      out[limit as LimitName] = n;
    }
    plans[name] = { features: [...new Set(features as Feature[])], limits: out };
  }
  const names = Object.keys(plans);
  if (defaultPlan === undefined)
    throw new PlansConfigError(`DEFAULT_PLAN is required when PLANS is set: name the plan new organizations get (${names.join(', ')})`);
  if (!plans[defaultPlan]) throw new PlansConfigError(`DEFAULT_PLAN "${defaultPlan}" is not a plan in PLANS (${names.join(', ')})`);
  return { plans, defaultPlan };
}
