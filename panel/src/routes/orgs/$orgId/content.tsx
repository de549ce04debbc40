import { useEffect, useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../../api/client';
import { calendarQuery, plannedPostsQuery, postsQuery } from '../../../queries/content';
import { PLATFORMS, type Platform } from '../../../../../src/shared/platforms.ts';
import { POST_STATUSES, type PostStatus } from '../../../../../src/shared/posts.ts';
import { compact, listSearch, oneOf, PAGE, PAGE_SIZE, str, type ListSearch } from '../../../lib/list';
import { useRole } from '../../../lib/account';
import { formatDateTime } from '../../../lib/format';
import { PageHeader, Badge } from '../../../components/ui/page';
import { Table, Th, SortTh, Td } from '../../../components/ui/table';
import { Empty } from '../../../components/ui/states';
import { noItems, QueryState } from '../../../components/ui/query-state';
import { useList } from '../../../lib/use-list';
import { Pagination } from '../../../components/ui/pagination';
import { Button } from '../../../components/ui/button';
import { Calendar, type Entry } from '../../../components/content/calendar';
import { browserTimeZone, dateIn, daysOf, isDate, offsetName, shift, todayIn, viewTitle } from '../../../components/content/dates';
import { GenerateDialog } from '../../../components/content/generate-dialog';
import { PostEditor } from '../../../components/content/post-editor';
import { PLATFORM_LABELS } from '../../../components/content/preview';

const SORTS = ['createdAt', 'updatedAt', 'scheduledAt'] as const;
const VIEWS = ['week', 'month'] as const;

/** The calendar's view and date, the list's filters, sort and page, and the open post: all in the URL. */
interface ContentSearch extends ListSearch {
  view?: (typeof VIEWS)[number];
  date?: string;
  platform?: Platform;
  status?: PostStatus;
  post?: string;
}

export const Route = createFileRoute('/orgs/$orgId/content')({
  validateSearch: (raw: Record<string, unknown>): ContentSearch =>
    compact({
      ...listSearch(raw, SORTS),
      view: oneOf(raw.view, VIEWS),
      date: isDate(raw.date) ? raw.date : undefined,
      platform: oneOf(raw.platform, PLATFORMS),
      status: oneOf(raw.status, POST_STATUSES),
      post: str(raw.post),
    }),
  component: ContentPage,
});

type Post = Schemas['Post'];

function ContentPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const [creating, setCreating] = useState(false);
  const [generating, setGenerating] = useState(false);
  const list = useList(search);
  // The calendar's moves, the open post and the list's page keep the list's page; a filter goes back to the first.
  const setSearch = (next: Partial<typeof search>, keepPage = false) => list.setSearch(next, { keepPage });

  const timeZone = browserTimeZone();
  const today = todayIn(timeZone);
  const view = search.view ?? 'week';
  const anchor = search.date ?? today;
  const days = daysOf(view, anchor);
  const from = days[0]!;
  const to = days.at(-1)!;

  const calendar = useQuery({ ...calendarQuery(orgId, { from, to, timeZone, platform: search.platform }), placeholderData: keepPreviousData });
  // The calendar endpoint lists what is scheduled or done; drafts and approved posts with a time are added from the list.
  const planned = useQuery(plannedPostsQuery(orgId, search.platform));
  const entries: Entry[] = [
    ...(calendar.data?.entries ?? []).map((e) => ({ postId: e.postId, platform: e.platform, status: e.status, at: e.at, date: e.date, title: e.title })),
    ...(planned.data?.items ?? [])
      .filter((p) => p.scheduledAt)
      .map((p) => ({
        postId: p.id,
        platform: p.platform,
        status: p.status,
        at: p.scheduledAt!,
        date: dateIn(p.scheduledAt!, timeZone),
        title: firstLine(p.body),
      }))
      .filter((e) => e.date >= from && e.date <= to),
  ];

  const open = (postId: string) => {
    setCreating(false);
    setSearch({ post: postId }, true);
  };

  return (
    <div>
      <PageHeader
        title="Content"
        description="Plan, write, approve and schedule posts for LinkedIn and X."
        actions={
          canWrite ? (
            <>
              <Button onClick={() => setGenerating(true)}>Generate with AI</Button>
              <Button
                variant="primary"
                onClick={() => {
                  setSearch({ post: undefined }, true);
                  setCreating(true);
                }}
              >
                New post
              </Button>
            </>
          ) : null
        }
      />

      <section aria-label="Calendar" className="mb-8">
        <div className="mb-3 flex flex-wrap items-center gap-3">
          <div role="group" aria-label="Calendar view" className="inline-flex rounded-md ring-1 ring-slate-300">
            {VIEWS.map((v) => (
              <button
                key={v}
                type="button"
                aria-pressed={view === v}
                onClick={() => setSearch({ view: v === 'week' ? undefined : v }, true)}
                className={`px-3 py-1.5 text-sm font-medium first:rounded-l-md last:rounded-r-md ${view === v ? 'bg-indigo-600 text-white' : 'bg-white text-slate-700 hover:bg-slate-50'}`}
              >
                {v === 'week' ? 'Week' : 'Month'}
              </button>
            ))}
          </div>
          <div className="inline-flex gap-1">
            <Button size="sm" aria-label={`Previous ${view}`} onClick={() => setSearch({ date: shift(view, anchor, -1) }, true)}>
              ‹
            </Button>
            <Button size="sm" onClick={() => setSearch({ date: undefined }, true)}>
              Today
            </Button>
            <Button size="sm" aria-label={`Next ${view}`} onClick={() => setSearch({ date: shift(view, anchor, 1) }, true)}>
              ›
            </Button>
          </div>
          <h2 className="text-lg font-semibold text-slate-900">{viewTitle(view, anchor)}</h2>
          <span className="text-xs text-slate-500">
            Times in {timeZone} ({offsetName(timeZone)})
          </span>
          <label className="ml-auto text-sm">
            <span className="sr-only">Platform</span>
            <select
              aria-label="Platform"
              value={search.platform ?? ''}
              onChange={(e) => setSearch({ platform: oneOf(e.target.value, PLATFORMS) })}
              className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
            >
              <option value="">All platforms</option>
              {PLATFORMS.map((p) => (
                <option key={p} value={p}>
                  {PLATFORM_LABELS[p]}
                </option>
              ))}
            </select>
          </label>
        </div>
        <QueryState query={calendar} loading="Loading the calendar…" retry>
          {() => (
            <>
              <Calendar
                view={view}
                anchor={anchor}
                days={days}
                entries={entries}
                today={today}
                onOpen={open}
                onShowWeek={(date) => setSearch({ view: undefined, date }, true)}
              />
              {entries.length === 0 ? (
                <p className="mt-2 text-sm text-slate-500">
                  Nothing planned in this {view}. {canWrite ? 'Write a post and give it a time, or generate drafts with AI.' : ''}
                </p>
              ) : null}
            </>
          )}
        </QueryState>
      </section>

      <PostList orgId={orgId} search={search} setSearch={setSearch} onOpen={open} />

      {search.post || creating ? (
        <PostEditor
          orgId={orgId}
          postId={creating ? null : search.post!}
          canWrite={canWrite}
          onClose={() => {
            setCreating(false);
            setSearch({ post: undefined }, true);
          }}
          onCreated={(id) => {
            setCreating(false);
            setSearch({ post: id }, true);
          }}
        />
      ) : null}
      <GenerateDialog orgId={orgId} open={generating} onOpenChange={setGenerating} onOpenPost={open} />
    </div>
  );
}

type Search = ContentSearch;

/** Every post, newest first: filters, sort and page in the URL. */
function PostList({
  orgId,
  search,
  setSearch,
  onOpen,
}: {
  orgId: string;
  search: Search;
  setSearch: (next: Partial<Search>, keepPage?: boolean) => void;
  onOpen: (id: string) => void;
}) {
  const [q, setQ] = useState(search.q ?? '');
  useEffect(() => {
    const timer = setTimeout(() => {
      if ((search.q ?? '') !== q) setSearch({ q: q || undefined });
    }, 300);
    return () => clearTimeout(timer);
  });
  const page = search.page ?? PAGE;
  const pageSize = search.pageSize ?? PAGE_SIZE;
  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort, q: search.q, status: search.status, platform: search.platform };
  const posts = useQuery({ ...postsQuery(orgId, query), placeholderData: keepPreviousData });
  const filtered = Boolean(search.q || search.status || search.platform);
  return (
    <section aria-labelledby="posts-heading">
      <div className="mb-3 flex flex-wrap items-end gap-3">
        <h2 id="posts-heading" className="mr-auto text-lg font-semibold text-slate-900">
          All posts
        </h2>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Search posts</span>
          <input
            type="search"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="Words in the text"
            className="w-64 rounded-md px-3 py-1.5 ring-1 ring-slate-300"
          />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select
            value={search.status ?? ''}
            onChange={(e) => setSearch({ status: oneOf(e.target.value, POST_STATUSES) })}
            className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
          >
            <option value="">Any status</option>
            {POST_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryState
        query={posts}
        loading="Loading posts…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No posts match these filters' : 'No posts yet'}>
            {filtered ? 'Try another search or filter.' : 'Drafts you write or generate appear here.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Posts">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Post</Th>
                  <Th>Platform</Th>
                  <Th>Status</Th>
                  <SortTh field="scheduledAt" label="Publish at" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="updatedAt" label="Changed" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="createdAt" label="Created" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((post) => (
                  <PostRow key={post.id} post={post} onOpen={() => onOpen(post.id)} />
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={(p) => setSearch({ page: p }, true)} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function PostRow({ post, onOpen }: { post: Post; onOpen: () => void }) {
  return (
    <tr className="hover:bg-slate-50">
      <Td className="max-w-md">
        <button type="button" className="text-left font-medium text-indigo-700 hover:underline" onClick={onOpen}>
          {firstLine(post.body) || '(no text)'}
        </button>
        {post.error ? <p className="mt-1 text-xs text-red-700">{post.error.message}</p> : null}
      </Td>
      <Td>{PLATFORM_LABELS[post.platform]}</Td>
      <Td>
        <Badge>{post.status}</Badge>
      </Td>
      <Td className="whitespace-nowrap">{formatDateTime(post.publishedAt ?? post.scheduledAt)}</Td>
      <Td className="whitespace-nowrap">{formatDateTime(post.updatedAt)}</Td>
      <Td className="whitespace-nowrap">{formatDateTime(post.createdAt)}</Td>
    </tr>
  );
}

function firstLine(body: string): string {
  const line =
    body
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? '';
  return [...line].length > 80 ? `${[...line].slice(0, 79).join('')}…` : line;
}
