/**
 * What the offline model does, per agent type: a fixed, documented plan that calls the type's tools
 * on the organization's real data and turns their results into a templated report and summary.
 * Every decision is a pure function of the conversation so far (the tool results in the prompt).
 */

export interface ToolResult {
  toolName: string;
  input: Record<string, unknown>;
  output: unknown;
}

export interface PlanState {
  agentType: string;
  task: string;
  input: Record<string, unknown>;
  /** Handoffs already made in this run. */
  handoffs: number;
  /** Tool names the model was offered. */
  tools: Set<string>;
  /** Every tool call of this conversation with its result, in order. */
  results: ToolResult[];
}

export interface Turn {
  reasoning?: string;
  text?: string;
  toolCalls?: { toolName: string; input: Record<string, unknown> }[];
}

interface LeadLike {
  id: string;
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  company?: string | null;
  website?: string | null;
  source?: string | null;
  status?: string;
  score?: number | null;
  tags?: string[];
  custom?: Record<string, unknown>;
}

const FREE_MAIL = new Set(['gmail.com', 'googlemail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'live.com', 'icloud.com', 'aol.com', 'proton.me', 'protonmail.com', 'gmx.com', 'mail.ru', 'yandex.ru']);
const STRONG_SOURCES = new Set(['referral', 'demo', 'demo-request', 'partner', 'event', 'inbound']);

/** The offline lead score: points for each piece of evidence present, capped at 100. */
export function scoreLead(lead: LeadLike): { score: number; reason: string } {
  let score = 0;
  const why: string[] = [];
  if (lead.email) {
    const domain = lead.email.split('@')[1]?.toLowerCase() ?? '';
    if (domain && !FREE_MAIL.has(domain)) {
      score += 35;
      why.push('business email');
    } else {
      score += 20;
      why.push('personal email');
    }
  }
  if (lead.phone) { score += 15; why.push('phone'); }
  if (lead.company) { score += 15; why.push('company'); }
  if (lead.website) { score += 10; why.push('website'); }
  if (lead.name) { score += 5; why.push('name'); }
  if (lead.source) {
    const strong = STRONG_SOURCES.has(lead.source.toLowerCase());
    score += strong ? 10 : 5;
    why.push(`source ${lead.source}`);
  }
  if (lead.tags && lead.tags.length) { score += 5; why.push('tagged'); }
  const customCount = lead.custom ? Object.keys(lead.custom).length : 0;
  if (customCount) {
    score += Math.min(5, customCount * 2);
    why.push(`${customCount} custom field${customCount > 1 ? 's' : ''}`);
  }
  score = Math.min(100, score);
  const missing = [!lead.email && 'email', !lead.phone && 'phone', !lead.company && 'company'].filter(Boolean);
  const reason = `Score ${score}: ${why.length ? why.join(', ') : 'no contact data'}${missing.length ? `; missing ${missing.join(', ')}` : ''}.`;
  return { score, reason };
}

const STOP = new Set('about above after again against because been before being below between both cannot could does doing during each every from further have having here more most other over same should some such than that their them then there these they this those through under until very were what when where which while will with would your yours into only also just like more less much many need make made used using use our ours you we the and for are but not all any can her his its was one two three out who how why may might must shall get got new'.split(' '));

export function keywords(text: string, count = 5): string[] {
  const freq = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}][\p{L}\p{N}-]{3,}/gu) ?? []) {
    if (STOP.has(word)) continue;
    freq.set(word, (freq.get(word) ?? 0) + 1);
  }
  return [...freq.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, count).map(([w]) => w);
}

const results = (s: PlanState, ...names: string[]) => s.results.filter((r) => names.includes(r.toolName));
const ok = (r: ToolResult) => r.output !== null && typeof r.output === 'object' && !('error' in (r.output as object));
const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function leadsFrom(list: ToolResult[]): LeadLike[] {
  const seen = new Map<string, LeadLike>();
  for (const r of list) {
    if (!ok(r)) continue;
    const out = r.output as { items?: LeadLike[]; id?: string };
    for (const lead of out.items ?? (out.id ? [out as LeadLike] : [])) seen.set(lead.id, lead);
  }
  return [...seen.values()];
}

function reportOf(s: PlanState): { reportId: string } | undefined {
  const r = results(s, 'create_report').find(ok);
  return r ? (r.output as { reportId: string }) : undefined;
}

/** After the report: hand off when the input asks for it, else finish with the summary. */
function closing(s: PlanState, summary: string): Turn {
  const to = str(s.input.handoffTo);
  if (to && to !== s.agentType && s.handoffs === 0 && s.tools.has('handoff') && results(s, 'handoff').length === 0) {
    return {
      reasoning: `The task continues with ${to}; handing the run over with what I found.`,
      toolCalls: [{ toolName: 'handoff', input: { to, task: str(s.input.handoffTask) ?? s.task, context: summary } }],
    };
  }
  return { text: summary };
}

function reportFailed(s: PlanState): string | undefined {
  const failed = results(s, 'create_report').find((r) => !ok(r));
  return failed ? String((failed.output as { error?: unknown })?.error ?? 'unknown error') : undefined;
}

// ---------------------------------------------------------------- LEAD_QUALIFIER

/** Lead ids named by the input: leadIds, leadId, or the lead of a workflow item (a lead, `{ lead }`, or an event `{ payload: { lead } }`). */
export function leadIdsOf(input: Record<string, unknown>): string[] {
  const ids: unknown[] = Array.isArray(input.leadIds) ? [...input.leadIds] : [];
  if (input.leadId) ids.push(input.leadId);
  const item = input.item as Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const candidate of [item, item?.lead, item?.payload?.lead]) {
    if (candidate && typeof candidate.id === 'string' && candidate.id.startsWith('lead_')) ids.push(candidate.id);
  }
  return [...new Set(ids.filter((x): x is string => typeof x === 'string' && x.length > 0 && x.length <= 64))].slice(0, 50);
}

function leadQualifier(s: PlanState): Turn {
  const threshold = num(s.input.threshold, 60);
  const found = results(s, 'search_leads', 'get_lead');
  if (found.length === 0) {
    const ids = leadIdsOf(s.input);
    if (ids.length) {
      return { reasoning: `Loading the ${plural(ids.length, 'lead')} named in the input.`, toolCalls: ids.map((id) => ({ toolName: 'get_lead', input: { id } })) };
    }
    const status = str(s.input.status) ?? 'NEW';
    const search: Record<string, unknown> = { status, limit: Math.min(50, Math.max(1, num(s.input.limit, 50))) };
    if (Array.isArray(s.input.tags) && s.input.tags.length) search.tags = s.input.tags;
    return { reasoning: `Looking for ${status} leads to qualify (threshold ${threshold}).`, toolCalls: [{ toolName: 'search_leads', input: search }] };
  }
  const leads = leadsFrom(found);
  if (leads.length === 0) return { text: 'No leads matched, so there was nothing to qualify.' };
  const scored = leads.map((lead) => ({ lead, ...scoreLead(lead) }));
  const written = results(s, 'qualify_lead', 'update_lead');
  if (written.length === 0) {
    return {
      reasoning: `Scoring ${plural(leads.length, 'lead')} by the evidence they carry; ${scored.filter((x) => x.score >= threshold).length} reach ${threshold}.`,
      toolCalls: scored.map((x) => (x.score >= threshold
        ? { toolName: 'qualify_lead', input: { id: x.lead.id, score: x.score, reason: x.reason } }
        : { toolName: 'update_lead', input: { id: x.lead.id, score: x.score, scoreReason: x.reason } })),
    };
  }
  const failedIds = new Set(written.filter((r) => !ok(r)).map((r) => String(r.input.id)));
  const done = scored.filter((x) => !failedIds.has(x.lead.id));
  const qualified = done.filter((x) => x.score >= threshold);
  const low = done.filter((x) => x.score < 40);
  const average = done.length ? Math.round(done.reduce((a, x) => a + x.score, 0) / done.length) : 0;
  const report = reportOf(s);
  const summary = `Evaluated ${plural(done.length, 'lead')}: ${qualified.length} qualified (score ≥ ${threshold}), ${done.length - qualified.length} below the threshold; average score ${average}.`
    + (failedIds.size ? ` ${plural(failedIds.size, 'update')} failed.` : '');
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const recommendations = [];
    if (qualified.length) {
      recommendations.push({
        title: `Tag the ${plural(qualified.length, 'qualified lead')} as "hot"`,
        description: 'Marks them for the sales team and for hot-lead workflows.',
        action: { type: 'tag_leads', params: { leadIds: qualified.map((x) => x.lead.id), tags: ['hot'] } },
      });
      recommendations.push({
        title: `Move the ${plural(qualified.length, 'qualified lead')} to CONTACTED once outreach starts`,
        description: 'Keeps the pipeline status in step with the outreach.',
        action: { type: 'set_lead_status', params: { leadIds: qualified.map((x) => x.lead.id), status: 'CONTACTED' } },
      });
    }
    if (low.length) {
      recommendations.push({
        title: `Tag ${plural(low.length, 'incomplete lead')} for enrichment`,
        description: 'They lack the contact or company data needed to judge them.',
        action: { type: 'tag_leads', params: { leadIds: low.map((x) => x.lead.id), tags: ['needs-enrichment'] } },
      });
    }
    const rows = [...done].sort((a, b) => b.score - a.score).map((x) => `| ${x.lead.name ?? x.lead.email ?? x.lead.id} | ${x.lead.company ?? ''} | ${x.score} | ${x.score >= threshold ? 'QUALIFIED' : x.lead.status ?? ''} | ${x.reason} |`);
    return {
      reasoning: 'Writing the qualification report with follow-up actions.',
      toolCalls: [{
        toolName: 'create_report',
        input: {
          type: 'LEAD_QUALIFICATION',
          title: `Lead qualification: ${qualified.length} of ${plural(done.length, 'lead')} qualified`,
          summary,
          metrics: { evaluated: done.length, qualified: qualified.length, belowThreshold: done.length - qualified.length, averageScore: average, threshold, topScore: done.reduce((m, x) => Math.max(m, x.score), 0) },
          body: `## Scores\n\n| Lead | Company | Score | Status | Reason |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
          recommendations,
        },
      }],
    };
  }
  return closing(s, `${summary} Report ${report.reportId} lists the scores and follow-up actions.`);
}

// ---------------------------------------------------------------- MARKET_ANALYST

interface Stats { total?: number; byStatus?: Record<string, number>; bySource?: Record<string, number>; averageScore?: number | null; createdLast7Days?: number; createdLast30Days?: number }

function urlsOf(input: Record<string, unknown>): string[] {
  const list = [input.url, ...(Array.isArray(input.urls) ? input.urls : [])].filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u));
  return [...new Set(list)].slice(0, 3);
}

function marketAnalyst(s: PlanState): Turn {
  if (isAnalyticsReport(s.input.reportType)) return analyticsReport(s, s.input.reportType);
  const stats = results(s, 'lead_stats');
  if (stats.length === 0) {
    const urls = s.tools.has('fetch_web_page') ? urlsOf(s.input) : [];
    return {
      reasoning: `Reading the pipeline statistics and recent leads${urls.length ? ` and ${plural(urls.length, 'web page')}` : ''}.`,
      toolCalls: [
        { toolName: 'lead_stats', input: {} },
        { toolName: 'search_leads', input: { limit: 50 } },
        ...urls.map((url) => ({ toolName: 'fetch_web_page', input: { url } })),
      ],
    };
  }
  const st = (ok(stats[0]!) ? stats[0]!.output : {}) as Stats;
  const leads = leadsFrom(results(s, 'search_leads'));
  const pages = results(s, 'fetch_web_page').map((r) => ({ url: String(r.input.url), ...(r.output as { title?: string | null; text?: string; error?: string }) }));
  const total = st.total ?? 0;
  const sources = Object.entries(st.bySource ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const top = sources[0];
  const newCount = st.byStatus?.NEW ?? 0;
  const qualifiedCount = st.byStatus?.QUALIFIED ?? 0;
  const pageKeywords = pages.filter((p) => p.text).map((p) => ({ ...p, keywords: keywords(`${p.title ?? ''} ${p.text ?? ''}`) }));
  const summary = `${plural(total, 'lead')} in the pipeline (${st.createdLast30Days ?? 0} in the last 30 days, ${newCount} new, ${qualifiedCount} qualified)`
    + (top ? `; strongest source: ${top[0]} with ${Math.round((top[1] / Math.max(1, total)) * 100)} %` : '')
    + (pageKeywords.length ? `; ${plural(pageKeywords.length, 'page')} analysed (themes: ${pageKeywords.flatMap((p) => p.keywords.slice(0, 3)).join(', ')})` : '') + '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const recommendations = [];
    if (newCount > 0) {
      recommendations.push({
        title: `Qualify the ${plural(newCount, 'new lead')}`,
        description: 'Runs the lead qualifier on the NEW leads so sales can focus on the strongest.',
        action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
      });
    }
    const fromTop = top ? leads.filter((l) => l.source === top[0]).map((l) => l.id) : [];
    if (top && fromTop.length) {
      recommendations.push({
        title: `Start a dedicated campaign for the "${top[0]}" channel`,
        description: `Tags the ${plural(fromTop.length, 'recent lead')} from ${top[0]} so a campaign can target them.`,
        action: { type: 'tag_leads', params: { leadIds: fromTop, tags: [`campaign-${top[0].toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 60)}`] } },
      });
    }
    const themes = pageKeywords.flatMap((p) => p.keywords.slice(0, 2));
    if (themes.length) {
      recommendations.push({
        title: `Publish content on ${themes.slice(0, 3).join(', ')}`,
        description: 'The analysed pages compete on these themes.',
        action: { type: 'run_agent', params: { type: 'CONTENT_WRITER', task: `Write a post on ${themes.slice(0, 3).join(', ')}`, input: { topic: themes.slice(0, 3).join(', ') } } },
      });
    }
    const body = [
      '## Pipeline',
      `- Leads: ${total} (last 7 days: ${st.createdLast7Days ?? 0}, last 30 days: ${st.createdLast30Days ?? 0})`,
      `- Average score: ${st.averageScore ?? 'n/a'}`,
      `- By status: ${Object.entries(st.byStatus ?? {}).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
      '', '## Sources', ...(sources.length ? sources.map(([k, n]) => `- ${k}: ${n} (${Math.round((n / Math.max(1, total)) * 100)} %)`) : ['- none']),
      ...(pages.length ? ['', '## Pages', ...pages.map((p) => (p.error ? `- ${p.url}: ${p.error}` : `- ${p.url} — ${p.title ?? 'untitled'}; themes: ${keywords(`${p.title ?? ''} ${p.text ?? ''}`).join(', ')}`))] : []),
    ].join('\n');
    return {
      reasoning: 'Writing the market research report.',
      toolCalls: [{
        toolName: 'create_report',
        input: {
          type: 'MARKET_RESEARCH',
          title: `Market research: ${s.task.slice(0, 120)}`,
          summary,
          metrics: { totalLeads: total, newLeads: newCount, qualifiedLeads: qualifiedCount, averageScore: st.averageScore ?? null, leadsLast30Days: st.createdLast30Days ?? 0, topSource: top?.[0] ?? null, pagesAnalyzed: pageKeywords.length },
          body,
          recommendations,
        },
      }],
    };
  }
  return closing(s, `${summary} Report ${report.reportId} has the details and next steps.`);
}

// ---------------------------------------------------------------- REPORT_WRITER

function reportWriter(s: PlanState): Turn {
  if (isAnalyticsReport(s.input.reportType)) return analyticsReport(s, s.input.reportType);
  if (s.input.reportType === 'CHATBOT_INSIGHTS') return chatbotAnalyst(s);
  if (s.input.reportType === 'CAMPAIGN_SUMMARY') return campaignSummary(s);
  const days = Math.min(366, Math.max(1, num(s.input.days, 7)));
  if (results(s, 'lead_stats').length === 0) {
    return {
      reasoning: `Collecting the figures of the last ${plural(days, 'day')}.`,
      toolCalls: [
        { toolName: 'lead_stats', input: {} },
        { toolName: 'search_leads', input: { status: 'QUALIFIED', limit: 50 } },
        { toolName: 'usage_summary', input: { days } },
      ],
    };
  }
  const st = (results(s, 'lead_stats').find(ok)?.output ?? {}) as Stats;
  const qualified = leadsFrom(results(s, 'search_leads'));
  const usage = (results(s, 'usage_summary').find(ok)?.output ?? {}) as { totals?: { costUsd?: number; runs?: number }; budget?: { limitUsd?: number | null; pct?: number | null } };
  const cost = usage.totals?.costUsd ?? 0;
  const summary = `Last ${plural(days, 'day')}: ${plural(st.createdLast7Days ?? 0, 'new lead')} this week, ${st.total ?? 0} in total, ${plural(qualified.length, 'qualified lead')} to follow up; AI spend ${cost} USD over ${plural(usage.totals?.runs ?? 0, 'agent run')}`
    + (usage.budget?.pct != null ? ` (${usage.budget.pct} % of the monthly budget)` : '') + '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const followUp = qualified.filter((l) => !(l.tags ?? []).includes('followed-up')).map((l) => l.id);
    const recommendations = [];
    if (followUp.length) {
      recommendations.push({
        title: `Start outreach to ${plural(followUp.length, 'qualified lead')}`,
        description: 'Moves them to CONTACTED.',
        action: { type: 'set_lead_status', params: { leadIds: followUp, status: 'CONTACTED' } },
      });
    }
    if ((st.byStatus?.NEW ?? 0) > 0) {
      recommendations.push({
        title: `Qualify the ${plural(st.byStatus!.NEW!, 'new lead')}`,
        description: 'Runs the lead qualifier on the NEW leads.',
        action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
      });
    }
    return {
      reasoning: 'Writing the digest.',
      toolCalls: [{
        toolName: 'create_report',
        input: {
          type: 'WEEKLY_DIGEST',
          title: `Digest: last ${plural(days, 'day')}`,
          summary,
          metrics: { totalLeads: st.total ?? 0, leadsLast7Days: st.createdLast7Days ?? 0, qualifiedLeads: qualified.length, averageScore: st.averageScore ?? null, aiCostUsd: cost, agentRuns: usage.totals?.runs ?? 0, budgetPct: usage.budget?.pct ?? null },
          body: ['## Qualified leads to follow up', ...(qualified.length ? qualified.map((l) => `- ${l.name ?? l.email ?? l.id}${l.company ? ` (${l.company})` : ''}: score ${l.score ?? 'n/a'}`) : ['- none'])].join('\n'),
          recommendations,
        },
      }],
    };
  }
  return closing(s, `${summary} Report ${report.reportId}.`);
}

// ---------------------------------------------------------------- CONTENT_WRITER

const PLATFORM_LIMITS: Record<string, number> = { X: 280, TWITTER: 280 };

function hashtagsFor(topic: string): string[] {
  const words = topic.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 2 && !STOP.has(w.toLowerCase()));
  const tags = words.slice(0, 3).map((w) => '#' + w[0]!.toUpperCase() + w.slice(1).toLowerCase());
  return [...new Set(tags.length ? tags : ['#Marketing'])];
}

export function draftPost(topic: string, platform: string, n: number, themes: string[]): { platform: string; body: string; hashtags: string[] } {
  const Topic = topic.charAt(0).toUpperCase() + topic.slice(1);
  const hooks = [
    `${Topic}: what most teams get wrong.`,
    `Three lessons on ${topic} from this quarter.`,
    `Thinking about ${topic}? Start here.`,
    `The simplest way to improve ${topic}.`,
  ];
  const points = themes.length ? `Key points: ${themes.slice(0, 3).join(', ')}.` : `Focus on one measurable goal, test small, and keep what works.`;
  const hashtags = hashtagsFor(topic);
  const limit = PLATFORM_LIMITS[platform.toUpperCase()];
  let body = [hooks[n % hooks.length], points, limit ? 'What would you add?' : 'Start with one change this week and measure it for a month.\n\nWhat would you add? Share your experience below.'].join('\n\n');
  const tail = ' ' + hashtags.join(' ');
  if (limit && body.length + tail.length > limit) body = body.slice(0, limit - tail.length - 1).trimEnd() + '…';
  return { platform: platform.toUpperCase(), body, hashtags };
}

function contentWriter(s: PlanState): Turn {
  const topic = str(s.input.topic) ?? s.task.slice(0, 200);
  const platforms = (Array.isArray(s.input.platforms) ? s.input.platforms : ['LINKEDIN']).filter((p): p is string => typeof p === 'string').slice(0, 5);
  const count = Math.min(5, Math.max(1, num(s.input.count, 1)));
  const url = s.tools.has('fetch_web_page') ? urlsOf(s.input)[0] : undefined;
  if (url && results(s, 'fetch_web_page').length === 0) {
    return { reasoning: `Reading ${url} for material.`, toolCalls: [{ toolName: 'fetch_web_page', input: { url } }] };
  }
  const page = results(s, 'fetch_web_page').map((r) => r.output as { title?: string; text?: string }).find((p) => p?.text);
  const themes = page ? keywords(`${page.title ?? ''} ${page.text ?? ''}`) : [];
  const posts = platforms.flatMap((p) => Array.from({ length: count }, (_, i) => draftPost(topic, p, i, themes)));
  const wantDrafts = s.input.draft !== false && s.tools.has('create_draft');
  const drafts = results(s, 'create_draft');
  if (wantDrafts && drafts.length === 0) {
    return {
      reasoning: `Writing ${plural(posts.length, 'post')} on "${topic}" for ${platforms.join(', ')}.`,
      toolCalls: posts.map((p) => ({ toolName: 'create_draft', input: { platform: p.platform, body: p.body, hashtags: p.hashtags } })),
    };
  }
  const postIds = drafts.filter(ok).map((r) => (r.output as { postId: string }).postId);
  if (s.input.requestApproval === true && s.tools.has('request_approval') && results(s, 'request_approval').length === 0) {
    return {
      reasoning: 'Asking for approval of the drafts.',
      toolCalls: [{ toolName: 'request_approval', input: { title: `Approve ${plural(posts.length, 'post')} on ${topic}`, description: posts.map((p) => `${p.platform}: ${p.body}`).join('\n\n').slice(0, 4000), payload: { postIds } } }],
    };
  }
  const summary = `Wrote ${plural(posts.length, 'post')} on "${topic}" for ${platforms.join(', ')}` + (postIds.length ? ` and saved ${plural(postIds.length, 'draft')}` : '') + '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const recommendations = postIds.length === 0 && !s.tools.has('create_draft') ? [] : postIds.length === 0
      ? posts.map((p, i) => ({ title: `Create the ${p.platform} draft #${i + 1}`, description: p.body.slice(0, 200), action: { type: 'create_draft', params: { platform: p.platform, body: p.body, hashtags: p.hashtags } } }))
      : [];
    return {
      reasoning: 'Writing the content plan.',
      toolCalls: [{
        toolName: 'create_report',
        input: {
          type: 'CONTENT_PLAN',
          title: `Content plan: ${topic.slice(0, 200)}`,
          summary,
          metrics: { posts: posts.length, drafts: postIds.length, platforms: platforms.length },
          body: posts.map((p, i) => `### ${i + 1}. ${p.platform}\n\n${p.body}\n\n${p.hashtags.join(' ')}`).join('\n\n'),
          recommendations,
        },
      }],
    };
  }
  return closing(s, `${summary} Report ${report.reportId}.`);
}

// ---------------------------------------------------------------- CHATBOT

const FAQ_STOP = new Set([...STOP, ...'what when where which who whom whose how why are is was were does did do can could would should will your you yours i me my mine we us our ours it its is a an the of to in on at for with from by about please hi hello hey thanks thank there their them they this that these those have has had any some'.split(' ')]);

/** A light stem: "opening", "opens" and "opened" all count as "open". */
function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
  }
  return word;
}

/** The words of a text that carry meaning (lower-case, stemmed, without stop words). */
export function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (w.length < 3 || FAQ_STOP.has(w)) continue;
    out.add(stem(w));
  }
  return out;
}

export interface FaqEntry { question: string; answer: string }

/**
 * How well a message matches an FAQ question, by word overlap: the share of the question's words
 * the message contains (0 when none). A match needs two shared words, or half of a short question.
 */
export function faqScore(message: string, question: string): number {
  const q = contentWords(question);
  if (q.size === 0) return 0;
  const m = contentWords(message);
  let shared = 0;
  for (const w of q) if (m.has(w)) shared++;
  if (shared === 0 || (shared < 2 && shared / q.size < 0.5)) return 0;
  return shared / q.size + shared / 100;
}

/** The FAQ entry that answers a message best, if any matches. */
export function faqAnswer(message: string, faq: FaqEntry[]): FaqEntry | null {
  let best: FaqEntry | null = null;
  let bestScore = 0;
  for (const entry of faq) {
    const score = faqScore(message, entry.question);
    if (score > bestScore) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}

const ASKS_FOR_PERSON = /\b(human|humans|agent|agents|person|people|someone|somebody|representative|operator|real person|staff member|customer service|support team|talk to (a|an|someone|somebody|your)|speak (to|with) (a|an|someone|somebody|your))\b/i;
const CLOSING = /^\s*(thanks?( you)?( so much| a lot)?|thank you|thx|ty|bye|goodbye|that'?s all|all good|perfect|great)[\s!.,]*(that'?s all|bye|goodbye|thanks?( you)?)?[\s!.,]*$/i;

/** Whether the contact asks for a person ("talk to someone", "a human please", "an agent"). */
export function asksForPerson(text: string): boolean {
  return ASKS_FOR_PERSON.test(text);
}

function faqOf(input: Record<string, unknown>): FaqEntry[] {
  return (Array.isArray(input.faq) ? input.faq : [])
    .filter((e): e is FaqEntry => Boolean(e) && typeof (e as FaqEntry).question === 'string' && typeof (e as FaqEntry).answer === 'string');
}

function newMessages(input: Record<string, unknown>): string[] {
  return (Array.isArray(input.messages) ? input.messages : [])
    .map((m) => (typeof m === 'string' ? m : typeof (m as { text?: unknown })?.text === 'string' ? (m as { text: string }).text : ''))
    .filter((t) => t.trim().length > 0);
}

/**
 * One turn of the conversations bot: a request for a person, or messages the FAQ cannot answer,
 * hand the conversation off; a thank-you closes it; anything else is answered from the FAQ.
 */
function chatbot(s: PlanState): Turn {
  const texts = newMessages(s.input);
  const acted = results(s, 'reply', 'handoff', 'close');
  if (acted.length === 0) {
    if (texts.length === 0) return { text: 'Nothing new to answer.' };
    if (texts.some(asksForPerson)) {
      return { reasoning: 'The contact asks for a person: handing the conversation off.', toolCalls: [{ toolName: 'handoff', input: { reason: 'contact asked for a person' } }] };
    }
    if (texts.every((t) => CLOSING.test(t))) {
      return {
        reasoning: 'The contact is done: saying goodbye and closing the conversation.',
        toolCalls: [{ toolName: 'reply', input: { text: 'You are welcome! Glad I could help. Goodbye.' } }, { toolName: 'close', input: {} }],
      };
    }
    const faq = faqOf(s.input);
    const answers = [...new Set(texts.map((t) => faqAnswer(t, faq)).filter((e): e is FaqEntry => e !== null).map((e) => e.answer))];
    if (answers.length === 0) {
      return { reasoning: 'The FAQ has no answer to this: handing the conversation off.', toolCalls: [{ toolName: 'handoff', input: { reason: 'no answer in the FAQ' } }] };
    }
    return { reasoning: `Answering from the FAQ (${plural(answers.length, 'answer')}).`, toolCalls: [{ toolName: 'reply', input: { text: answers.join('\n\n') } }] };
  }
  const parts: string[] = [];
  for (const r of acted) {
    const out = (r.output ?? {}) as { error?: string; dropped?: boolean; reason?: string };
    if (out.error) parts.push(`${r.toolName} failed: ${out.error}`);
    else if (r.toolName === 'reply') parts.push(out.dropped ? `The reply was dropped: ${out.reason ?? 'a person handles the conversation'}` : 'Answered from the FAQ');
    else if (r.toolName === 'handoff') parts.push(`Handed off to a person (${String(r.input.reason ?? '')})`);
    else parts.push('Closed the conversation');
  }
  return { text: `${parts.join('; ')}.` };
}

// ---------------------------------------------------------------- CHATBOT_ANALYST

interface ConversationFigures {
  opened?: number; closed?: number; closedByBot?: number; handoffs?: number; handoffReasons?: Record<string, number>;
  medianFirstReplySec?: number | null; medianHandoffSec?: number | null;
  handedOff?: { conversationId: string; leadId: string | null; reason?: string; channel?: string }[];
}

function chatbotAnalyst(s: PlanState): Turn {
  const days = Math.min(366, Math.max(1, num(s.input.days, 30)));
  const stats = results(s, 'conversation_stats');
  if (stats.length === 0) {
    const input: Record<string, unknown> = { days };
    if (str(s.input.inboxId)) input.inboxId = str(s.input.inboxId);
    return { reasoning: `Reading the conversation figures of the last ${plural(days, 'day')}.`, toolCalls: [{ toolName: 'conversation_stats', input }] };
  }
  const st = (ok(stats[0]!) ? stats[0]!.output : {}) as ConversationFigures;
  if (!ok(stats[0]!)) return { text: `The conversation figures could not be read: ${String((stats[0]!.output as { error?: unknown })?.error ?? 'unknown error')}` };
  const opened = st.opened ?? 0;
  const closed = st.closed ?? 0;
  const byBot = st.closedByBot ?? 0;
  const handoffs = st.handoffs ?? 0;
  const reasons = Object.entries(st.handoffReasons ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const botRate = closed ? Math.round((byBot / closed) * 100) : null;
  const handoffRate = opened ? Math.round((handoffs / opened) * 100) : null;
  const summary = `Last ${plural(days, 'day')}: ${plural(opened, 'conversation')} opened, ${closed} closed (${byBot} by the bot${botRate !== null ? `, ${botRate} %` : ''}), `
    + `${plural(handoffs, 'handoff')}${handoffRate !== null ? ` (${handoffRate} % of the opened)` : ''}`
    + (reasons.length ? `; main reason: ${reasons[0]![0]} (${reasons[0]![1]})` : '') + '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const leadIds = [...new Set((st.handedOff ?? []).map((c) => c.leadId).filter((id): id is string => typeof id === 'string'))];
    const recommendations = [];
    if (leadIds.length) {
      recommendations.push({
        title: `Tag the ${plural(leadIds.length, 'lead')} the bot handed to people for follow-up`,
        description: 'Marks the contacts who needed a person, so the sales team follows them up.',
        action: { type: 'tag_leads', params: { leadIds: leadIds.slice(0, 1000), tags: ['chatbot-handoff'] } },
      });
    }
    if (opened > 0) {
      recommendations.push({
        title: 'Qualify the new leads the conversations brought',
        description: 'Runs the lead qualifier on the NEW leads.',
        action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
      });
    }
    const unanswered = (st.handoffReasons ?? {})['no answer in the FAQ'] ?? 0;
    const body = [
      '## Conversations',
      `- Opened: ${opened}; closed: ${closed}; closed by the bot: ${byBot}${botRate !== null ? ` (${botRate} %)` : ''}`,
      `- Handoffs: ${handoffs}${handoffRate !== null ? ` (${handoffRate} % of the opened)` : ''}`,
      `- Median time to the first human reply: ${st.medianFirstReplySec ?? 'n/a'} s; to the handoff: ${st.medianHandoffSec ?? 'n/a'} s`,
      '', '## Handoff reasons', ...(reasons.length ? reasons.map(([k, n]) => `- ${k}: ${n}`) : ['- none']),
      ...(unanswered ? ['', `## FAQ`, `- ${plural(unanswered, 'conversation')} had no answer in the FAQ: read them and add their questions to the inbox's FAQ.`] : []),
    ].join('\n');
    return {
      reasoning: 'Writing the chatbot insights.',
      toolCalls: [{
        toolName: 'create_report',
        input: {
          type: 'CHATBOT_INSIGHTS',
          title: `Chatbot insights: last ${plural(days, 'day')}`,
          summary,
          metrics: { opened, closed, closedByBot: byBot, botResolutionPct: botRate, handoffs, handoffPct: handoffRate, medianFirstReplySec: st.medianFirstReplySec ?? null, medianHandoffSec: st.medianHandoffSec ?? null },
          body,
          recommendations,
        },
      }],
    };
  }
  return closing(s, `${summary} Report ${report.reportId}.`);
}

// ---------------------------------------------------------------- CAMPAIGN_SUMMARY (REPORT_WRITER)

interface CampaignFigures {
  campaign?: { id: string; name: string; channel: string; status: string; steps?: unknown[]; stats?: Record<string, number> };
  skipped?: Record<string, number>;
  repliedLeadIds?: string[];
  unansweredLeadIds?: string[];
}

function campaignSummary(s: PlanState): Turn {
  const campaignId = str(s.input.campaignId);
  if (!campaignId) return { text: 'A CAMPAIGN_SUMMARY needs input.campaignId: the campaign to summarise.' };
  const figures = results(s, 'campaign_stats');
  if (figures.length === 0) return { reasoning: 'Reading the campaign\'s figures.', toolCalls: [{ toolName: 'campaign_stats', input: { campaignId } }] };
  if (!ok(figures[0]!)) return { text: `The campaign's figures could not be read: ${String((figures[0]!.output as { error?: unknown })?.error ?? 'unknown error')}` };
  const f = figures[0]!.output as CampaignFigures;
  const c = f.campaign!;
  const st = { total: 0, sent: 0, delivered: 0, read: 0, replied: 0, failed: 0, skipped: 0, pending: 0, ...(c.stats ?? {}) };
  const pct = (n: number, of: number) => (of ? Math.round((n / of) * 100) : null);
  const replyRate = pct(st.replied, st.sent);
  const summary = `"${c.name}" (${c.channel}, ${c.status}): ${st.sent} of ${plural(st.total, 'recipient')} sent, ${st.delivered} delivered, ${st.read} read, `
    + `${plural(st.replied, 'reply')}${replyRate !== null ? ` (${replyRate} % of the sent)` : ''}, ${st.failed} failed, ${st.skipped} skipped`
    + (st.pending ? `, ${st.pending} still pending` : '') + '.';
  const report = reportOf(s);
  if (report) return closing(s, `${summary} Report ${report.reportId}.`);
  const error = reportFailed(s);
  if (error) return { text: `${summary} The report could not be saved: ${error}` };
  const replied = f.repliedLeadIds ?? [];
  const unanswered = f.unansweredLeadIds ?? [];
  const recommendations = [];
  if (replied.length) {
    recommendations.push({
      title: `Qualify the ${plural(replied.length, 'lead')} who replied`,
      description: 'They answered the campaign: mark them ENGAGED so the sales team takes the conversation on.',
      action: { type: 'set_lead_status', params: { leadIds: replied.slice(0, 1000), status: 'ENGAGED' } },
    });
  }
  if (unanswered.length) {
    recommendations.push({
      title: `Tag the ${plural(unanswered.length, 'lead')} who did not answer`,
      description: 'They received every step without replying: a tag lets a later campaign (another channel or angle) reach exactly them.',
      action: { type: 'tag_leads', params: { leadIds: unanswered.slice(0, 1000), tags: [`no-reply-${c.id.slice(-6)}`] } },
    });
  }
  recommendations.push({
    title: 'Score the leads this campaign reached',
    description: 'Runs the lead qualifier, so the replies and engagement show in the scores.',
    action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: `Qualify the leads of campaign ${c.name}`, input: { leadIds: [...replied, ...unanswered].slice(0, 1000) } } },
  });
  const skipped = Object.entries(f.skipped ?? {}).sort((a, b) => b[1] - a[1]);
  const body = [
    '## Results',
    `- Recipients: ${st.total}; sent: ${st.sent}; delivered: ${st.delivered}${pct(st.delivered, st.sent) !== null ? ` (${pct(st.delivered, st.sent)} %)` : ''}; read: ${st.read}`,
    `- Replies: ${st.replied}${replyRate !== null ? ` (${replyRate} % of the sent)` : ''}; failed: ${st.failed}; pending: ${st.pending}`,
    '', '## Skipped', ...(skipped.length ? skipped.map(([reason, n]) => `- ${reason}: ${n}`) : ['- none']),
  ].join('\n');
  return {
    reasoning: 'Writing the campaign summary.',
    toolCalls: [{
      toolName: 'create_report',
      input: {
        type: 'CAMPAIGN_SUMMARY', title: `Campaign summary: ${c.name}`, summary,
        metrics: { ...st, replyPct: replyRate, deliveredPct: pct(st.delivered, st.sent), campaignId: c.id },
        body, recommendations,
      },
    }],
  };
}

// ---------------------------------------------------------------- ANALYTICS_REVIEW · SEO_AUDIT · TRAFFIC_STRATEGY

const ANALYTICS_REPORTS = ['ANALYTICS_REVIEW', 'SEO_AUDIT', 'TRAFFIC_STRATEGY'] as const;
type AnalyticsReport = (typeof ANALYTICS_REPORTS)[number];
const isAnalyticsReport = (v: unknown): v is AnalyticsReport => ANALYTICS_REPORTS.includes(v as AnalyticsReport);

interface AnalyticsFigures {
  days: number;
  current: { from: string; to: string; totals: Record<string, number> };
  previous: { from: string; to: string; totals: Record<string, number> };
  changePct: Record<string, number | null>;
  daily: ({ date: string } & Record<string, number>)[];
  hasData: boolean;
}

/** The three analytics reports, from analytics_summary: the numbers, what moved, and actions this service can execute. */
function analyticsReport(s: PlanState, type: AnalyticsReport): Turn {
  const days = Math.min(183, Math.max(1, num(s.input.days, 28)));
  const figures = results(s, 'analytics_summary');
  if (figures.length === 0) return { reasoning: `Reading the synced analytics of the last ${plural(days, 'day')}.`, toolCalls: [{ toolName: 'analytics_summary', input: { days } }] };
  if (!ok(figures[0]!)) return { text: `The analytics could not be read: ${String((figures[0]!.output as { error?: unknown })?.error ?? 'unknown error')}` };
  const f = figures[0]!.output as AnalyticsFigures;
  const cur = f.current.totals;
  const change = (metric: string) => {
    const pct = f.changePct[metric];
    return pct === null || pct === undefined ? 'no earlier figures' : `${pct > 0 ? '+' : ''}${pct} %`;
  };
  const line = (label: string, metric: string, digits = 0) => `- ${label}: ${Number(cur[metric] ?? 0).toFixed(digits)} (${change(metric)} against ${f.previous.from} – ${f.previous.to})`;
  const sessions = cur['ga4.sessions'] ?? 0;
  const conversions = cur['ga4.conversions'] ?? 0;
  const conversionPct = sessions ? Math.round((conversions / sessions) * 1000) / 10 : null;
  const ctrPct = Math.round((cur['gsc.ctr'] ?? 0) * 1000) / 10;
  const position = Math.round((cur['gsc.position'] ?? 0) * 10) / 10;
  const best = [...f.daily].sort((a, b) => (b['ga4.sessions'] ?? 0) - (a['ga4.sessions'] ?? 0))[0];
  const period = `${f.current.from} – ${f.current.to}`;
  const summary = !f.hasData
    ? `No Google Analytics or Search Console numbers have been synced for ${period}: connect Google under Settings → Integrations, choose a property and a site, and the next report will have figures.`
    : type === 'SEO_AUDIT'
      ? `Search over ${period}: ${cur['gsc.clicks'] ?? 0} clicks (${change('gsc.clicks')}) from ${cur['gsc.impressions'] ?? 0} impressions, click-through rate ${ctrPct} %, average position ${position}.`
      : `Website over ${period}: ${sessions} sessions (${change('ga4.sessions')}), ${cur['ga4.users'] ?? 0} users, ${conversions} conversions`
        + (conversionPct !== null ? ` (${conversionPct} % of sessions)` : '') + `; search brought ${cur['gsc.clicks'] ?? 0} clicks.`;
  const report = reportOf(s);
  if (report) return closing(s, `${summary} Report ${report.reportId}.`);
  const error = reportFailed(s);
  if (error) return { text: `${summary} The report could not be saved: ${error}` };

  const recommendations = [];
  const fell = (metric: string, by: number) => (f.changePct[metric] ?? 0) <= -by;
  if (f.hasData && (fell('ga4.sessions', 10) || fell('gsc.clicks', 10))) {
    recommendations.push({
      title: 'Win the lost traffic back with new content',
      description: `Sessions ${change('ga4.sessions')}, search clicks ${change('gsc.clicks')}: the content writer drafts posts that send readers to the site.`,
      action: { type: 'run_agent', params: { type: 'CONTENT_WRITER', task: 'Write posts that bring visitors back to our website', input: { topic: 'our most useful guides and offers', platforms: ['LINKEDIN', 'X'] } } },
    });
  }
  if (f.hasData && (cur['gsc.impressions'] ?? 0) > 0 && ctrPct < 3) {
    recommendations.push({
      title: 'Raise the click-through rate from search',
      description: `Only ${ctrPct} % of ${cur['gsc.impressions']} impressions became clicks (average position ${position}): rewrite titles and descriptions of the pages that show most.`,
      action: { type: 'run_agent', params: { type: 'CONTENT_WRITER', task: 'Propose clearer page titles and meta descriptions for our most shown search results', input: { topic: 'search titles and descriptions' } } },
    });
  }
  if (f.hasData && sessions > 0 && conversionPct !== null && conversionPct < 2) {
    recommendations.push({
      title: 'Turn more visitors into leads',
      description: `${conversionPct} % of sessions converted: qualify the leads the site brought so sales follows up the best quickly.`,
      action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads from the website', input: { status: 'NEW' } } },
    });
  }
  if (type === 'TRAFFIC_STRATEGY' || recommendations.length === 0) {
    recommendations.push({
      title: 'Keep a steady publishing rhythm',
      description: 'A plan of posts for the coming weeks keeps visitors coming; the content writer drafts them for approval.',
      action: { type: 'run_agent', params: { type: 'CONTENT_WRITER', task: 'Plan and draft next week\'s posts', input: { topic: 'what our customers ask most', count: 3 } } },
    });
  }
  const body = [
    `## ${period}`,
    ...(f.hasData ? [] : ['No synced numbers yet: connect Google (Settings → Integrations), choose the GA4 property and the Search Console site, then sync.', '']),
    '### Website (GA4)', line('Sessions', 'ga4.sessions'), line('Users', 'ga4.users'), line('Conversions', 'ga4.conversions'),
    ...(conversionPct !== null ? [`- Conversion rate: ${conversionPct} %`] : []),
    ...(best && (best['ga4.sessions'] ?? 0) > 0 ? [`- Busiest day: ${best.date} (${best['ga4.sessions']} sessions)`] : []),
    '', '### Search (Search Console)', line('Clicks', 'gsc.clicks'), line('Impressions', 'gsc.impressions'),
    `- Click-through rate: ${ctrPct} % (${change('gsc.ctr')})`, `- Average position: ${position} (${change('gsc.position')}; lower is better)`,
  ].join('\n');
  const titles: Record<AnalyticsReport, string> = { ANALYTICS_REVIEW: 'Analytics review', SEO_AUDIT: 'SEO audit', TRAFFIC_STRATEGY: 'Traffic strategy' };
  return {
    reasoning: `Writing the ${titles[type].toLowerCase()}.`,
    toolCalls: [{
      toolName: 'create_report',
      input: {
        type, title: `${titles[type]}: ${period}`, summary,
        metrics: { ...cur, sessionsChangePct: f.changePct['ga4.sessions'] ?? null, clicksChangePct: f.changePct['gsc.clicks'] ?? null, conversionPct, days: f.days },
        body, recommendations,
      },
    }],
  };
}

const PLANS: Record<string, (s: PlanState) => Turn> = {
  LEAD_QUALIFIER: leadQualifier,
  MARKET_ANALYST: marketAnalyst,
  REPORT_WRITER: reportWriter,
  CONTENT_WRITER: contentWriter,
  CHATBOT: chatbot,
  CHATBOT_ANALYST: chatbotAnalyst,
};

export function planTurn(s: PlanState): Turn {
  const plan = PLANS[s.agentType];
  if (!plan) return { text: `The offline model has no plan for agent type ${s.agentType}; nothing was done.` };
  // Offer only the tools the run actually has.
  const turn = plan(s);
  if (turn.toolCalls) turn.toolCalls = turn.toolCalls.filter((c) => s.tools.has(c.toolName));
  if (turn.toolCalls && turn.toolCalls.length === 0) delete turn.toolCalls;
  if (!turn.toolCalls && !turn.text) turn.text = 'Done.';
  return turn;
}
