import { Tabs } from 'radix-ui';
import type { Platform } from '../../../../src/shared/platforms.ts';
import { countPost, pieces, type Count } from './length';

export const PLATFORM_LABELS: Record<Platform, string> = { LINKEDIN: 'LinkedIn', X: 'X' };

/**
 * The length as the platform counts it, against its limit. Over the limit it turns red and says by
 * how much; the `output` element is a live status, so a screen reader hears the count change.
 */
export function LengthCounter({
  count,
  id,
  label = `Length as ${PLATFORM_LABELS[count.platform]} counts it`,
  compact = false,
}: {
  count: Count;
  id?: string;
  label?: string;
  compact?: boolean;
}) {
  const near = !count.over && count.length > count.max * 0.9;
  return (
    <div className="flex items-center justify-between gap-3 text-xs">
      <span className="text-slate-500">
        {compact
          ? `${PLATFORM_LABELS[count.platform]} counts`
          : count.platform === 'X'
            ? 'Links count 23, emoji and CJK characters 2; hashtags included.'
            : 'Characters, hashtags included.'}
      </span>
      <span className="flex items-center gap-2">
        {count.over ? <span className="font-medium text-red-700">{count.over.toLocaleString()} over the limit</span> : null}
        <output
          id={id}
          aria-label={label}
          data-over={count.over > 0 || undefined}
          className={`rounded px-1.5 py-0.5 font-mono whitespace-nowrap tabular-nums ${count.over ? 'bg-red-100 font-semibold text-red-800' : near ? 'bg-amber-50 text-amber-800' : 'bg-slate-100 text-slate-700'}`}
        >
          {count.length.toLocaleString()} / {count.max.toLocaleString()}
        </output>
      </span>
    </div>
  );
}

/** The post as it will look on each platform, in tabs; the tab of the post's own platform first. */
export function PlatformPreviews({
  platform,
  body,
  hashtags,
  media,
  author,
}: {
  platform: Platform;
  body: string;
  hashtags: string[];
  media: { url: string; contentType: string }[];
  author: string;
}) {
  const order: Platform[] = platform === 'X' ? ['X', 'LINKEDIN'] : ['LINKEDIN', 'X'];
  return (
    <Tabs.Root defaultValue={platform} key={platform} className="rounded-lg bg-slate-50 p-3 ring-1 ring-slate-200">
      <Tabs.List aria-label="Previews" className="mb-3 flex gap-1">
        {order.map((p) => (
          <Tabs.Trigger
            key={p}
            value={p}
            className="rounded-md px-3 py-1 text-sm font-medium text-slate-600 hover:bg-white data-[state=active]:bg-white data-[state=active]:text-indigo-700 data-[state=active]:shadow-xs"
          >
            {PLATFORM_LABELS[p]} preview
          </Tabs.Trigger>
        ))}
      </Tabs.List>
      {order.map((p) => (
        <Tabs.Content key={p} value={p} className="outline-none">
          <PreviewCard platform={p} count={countPost(p, body, hashtags)} media={media} author={author} />
        </Tabs.Content>
      ))}
    </Tabs.Root>
  );
}

export function PreviewCard({
  platform,
  count,
  media,
  author,
}: {
  platform: Platform;
  count: Count;
  media: { url: string; contentType: string }[];
  author: string;
}) {
  const shown = platform === 'X' ? media.slice(0, 4) : media;
  return (
    <article aria-label={`${PLATFORM_LABELS[platform]} preview`} className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
      <header className="mb-2 flex items-center gap-2">
        <span
          aria-hidden="true"
          className={`flex size-9 items-center justify-center rounded-full text-sm font-semibold text-white ${platform === 'X' ? 'bg-slate-900' : 'bg-sky-700'}`}
        >
          {author.slice(0, 1).toUpperCase() || '?'}
        </span>
        <div className="leading-tight">
          <p className="text-sm font-semibold text-slate-900">{author || 'Your account'}</p>
          <p className="text-xs text-slate-500">{platform === 'X' ? '@account · now' : 'Now · public'}</p>
        </div>
      </header>
      {count.text.trim() ? (
        <p className="text-sm break-words whitespace-pre-wrap text-slate-900">
          {pieces(count.text).map((piece, i) =>
            piece.kind === 'text' ? (
              <span key={i}>{piece.text}</span>
            ) : (
              <span key={i} className={platform === 'X' ? 'text-sky-600' : 'font-medium text-sky-700'}>
                {piece.kind === 'link' && platform === 'X' ? shortLink(piece.text) : piece.text}
              </span>
            ),
          )}
        </p>
      ) : (
        <p className="text-sm text-slate-400 italic">Nothing written yet.</p>
      )}
      {shown.length ? (
        <div className={`mt-3 grid gap-1 overflow-hidden rounded-lg ${shown.length > 1 ? 'grid-cols-2' : ''}`}>
          {shown.map((m) =>
            m.contentType.startsWith('video/') ? (
              <video key={m.url} src={m.url} className="h-36 w-full bg-black object-cover" muted />
            ) : (
              <img key={m.url} src={m.url} alt="" className="h-36 w-full object-cover" />
            ),
          )}
        </div>
      ) : null}
      <footer className="mt-3 border-t border-slate-100 pt-2">
        <LengthCounter count={count} label={`Length in the ${PLATFORM_LABELS[platform]} preview`} compact />
      </footer>
    </article>
  );
}

/** X shows a link without its scheme, cut after 23 characters with an ellipsis. */
function shortLink(url: string): string {
  const bare = url.replace(/^https?:\/\//i, '').replace(/^www\./i, '');
  return bare.length > 23 ? `${bare.slice(0, 22)}…` : bare;
}
