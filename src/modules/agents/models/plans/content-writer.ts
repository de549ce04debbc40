import { STOP_WORDS } from '../../../../shared/stop-words.ts';
import { results, ok, num, str, reportOf, closing, reportFailed, urlsOf, type PlanState, type Turn } from './kit.ts';
import { keywords, plural } from './text.ts';

// CONTENT_WRITER: drafts of posts on a topic for each platform (from a page's themes when given),
// saved as drafts, sent for approval when asked, and a content plan.

const PLATFORM_LIMITS: Record<string, number> = { X: 280, TWITTER: 280 };

function hashtagsFor(topic: string): string[] {
  const words = topic.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 2 && !STOP_WORDS.has(w.toLowerCase()));
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
  let body = [
    hooks[n % hooks.length],
    points,
    limit ? 'What would you add?' : 'Start with one change this week and measure it for a month.\n\nWhat would you add? Share your experience below.',
  ].join('\n\n');
  const tail = ' ' + hashtags.join(' ');
  if (limit && body.length + tail.length > limit) body = body.slice(0, limit - tail.length - 1).trimEnd() + '…';
  return { platform: platform.toUpperCase(), body, hashtags };
}

export function contentWriter(s: PlanState): Turn {
  const topic = str(s.input.topic) ?? s.task.slice(0, 200);
  const platforms = (Array.isArray(s.input.platforms) ? s.input.platforms : ['LINKEDIN']).filter((p): p is string => typeof p === 'string').slice(0, 5);
  const count = Math.min(5, Math.max(1, num(s.input.count, 1)));
  const url = s.tools.has('fetch_web_page') ? urlsOf(s.input)[0] : undefined;
  if (url && results(s, 'fetch_web_page').length === 0) {
    return { reasoning: `Reading ${url} for material.`, toolCalls: [{ toolName: 'fetch_web_page', input: { url } }] };
  }
  const page = results(s, 'fetch_web_page')
    .map((r) => r.output as { title?: string; text?: string })
    .find((p) => p?.text);
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
      toolCalls: [
        {
          toolName: 'request_approval',
          input: {
            title: `Approve ${plural(posts.length, 'post')} on ${topic}`,
            description: posts
              .map((p) => `${p.platform}: ${p.body}`)
              .join('\n\n')
              .slice(0, 4000),
            payload: { postIds },
          },
        },
      ],
    };
  }
  const summary =
    `Wrote ${plural(posts.length, 'post')} on "${topic}" for ${platforms.join(', ')}` +
    (postIds.length ? ` and saved ${plural(postIds.length, 'draft')}` : '') +
    '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const recommendations =
      postIds.length === 0 && !s.tools.has('create_draft')
        ? []
        : postIds.length === 0
          ? posts.map((p, i) => ({
              title: `Create the ${p.platform} draft #${i + 1}`,
              description: p.body.slice(0, 200),
              action: { type: 'create_draft', params: { platform: p.platform, body: p.body, hashtags: p.hashtags } },
            }))
          : [];
    return {
      reasoning: 'Writing the content plan.',
      toolCalls: [
        {
          toolName: 'create_report',
          input: {
            type: 'CONTENT_PLAN',
            title: `Content plan: ${topic.slice(0, 200)}`,
            summary,
            metrics: { posts: posts.length, drafts: postIds.length, platforms: platforms.length },
            body: posts.map((p, i) => `### ${i + 1}. ${p.platform}\n\n${p.body}\n\n${p.hashtags.join(' ')}`).join('\n\n'),
            recommendations,
          },
        },
      ],
    };
  }
  return closing(s, `${summary} Report ${report.reportId}.`);
}
