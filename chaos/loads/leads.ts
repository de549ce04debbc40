/**
 * Lead creates and CSV imports (CONTRACT §3). A create answered 201/200 with an id must be a stored
 * lead carrying the e-mail that was sent; every row of an accepted import (`{ created, merged,
 * rejected }`) must be a stored lead, found by its e-mail, and the counts must add up; and one
 * person is one lead (de-duplication by e-mail inside the project), however the creates and the
 * imports raced.
 */
import type { Check, Load, World } from '../world.ts';

/** Creates per second at scale 1; one import every IMPORT_EVERY ticks. */
const RATE = 4;
const IMPORT_EVERY = 240;
const IMPORT_ROWS = 300;
const DOMAIN = 'leads.chaos.example.com';

interface Created {
  id: string;
  email: string;
}
interface Imported {
  rows: number;
  emails: string[];
  created: number;
  merged: number;
  rejected: number;
}

const created: Created[] = [];
const imports: Imported[] = [];
/** Every e-mail a load request carried (accepted or not), for the one-lead-per-person check. */
const sentEmails = new Set<string>();
let run = '';
let serial = 0;
let ticks = 0;

const emailOf = (n: number) => `l-${run}-${n}@${DOMAIN}`;

async function create(world: World): Promise<void> {
  // One create in 20 names a person created before (a merge: 200 with the same lead), in mixed case.
  const again = serial > 10 && world.rng.int(20) === 0;
  const email = again ? emailOf(world.rng.int(serial)) : emailOf(serial++);
  sentEmails.add(email);
  const answer = await world.api.request('POST', `${world.api.org}/leads`, {
    body: { name: `Chaos ${email.split('@')[0]}`, email: again ? email.toUpperCase() : email, tags: ['chaos-leads'], source: 'chaos' },
    routeClass: 'lead.create',
  });
  if ((answer.status === 201 || answer.status === 200) && typeof answer.json?.id === 'string') {
    created.push({ id: answer.json.id as string, email });
    world.count('leads created or merged');
  }
}

async function importCsv(world: World): Promise<void> {
  const emails: string[] = [];
  for (let i = 0; i < IMPORT_ROWS; i++) emails.push(emailOf(serial++));
  // A few rows repeat a row of the same file and a few name people created before: both merge.
  const lines = emails.map((e, i) => `Import ${i},${e},Chaos Co,chaos-import;batch`);
  for (let i = 0; i < 5; i++) lines.push(`Again ${i},${emails[world.rng.int(emails.length)]!.toUpperCase()},,chaos-import`);
  const earlier = created.length > 0 ? Array.from({ length: 5 }, () => world.rng.pick(created).email) : [];
  for (const e of earlier) lines.push(`Earlier,${e},,chaos-import`);
  for (const e of [...emails, ...earlier]) sentEmails.add(e);
  const csv = `name,email,company,tags\n${lines.join('\n')}\n`;
  const answer = await world.api.request('POST', `${world.api.org}/leads/import`, {
    raw: csv,
    contentType: 'text/csv; charset=utf-8',
    routeClass: 'lead.import',
    timeoutMs: 60_000,
  });
  if (answer.status === 200 || answer.status === 201) {
    const j = answer.json as { created: number; merged: number; rejected: unknown[] };
    imports.push({ rows: lines.length, emails: [...emails, ...earlier], created: j.created, merged: j.merged, rejected: j.rejected?.length ?? -1 });
    world.count('lead imports accepted');
  }
}

export const load: Load = {
  name: 'leads',
  ratePerSecond: RATE,

  async setup(world: World): Promise<void> {
    run = world.rng.id(6).toLowerCase();
  },

  async tick(world: World): Promise<void> {
    // The first import a few seconds in, then one a minute at scale 1.
    if (ticks++ % Math.max(30, Math.round(IMPORT_EVERY * world.scale)) === 20) await importCsv(world);
    else await create(world);
  },

  async check(world: World): Promise<Check[]> {
    const checks: Check[] = [];
    const projectId = world.api.projectId;
    // Creates: the id is a stored lead of the project with the e-mail sent.
    const byId = new Map<string, string | null>();
    for (let i = 0; i < created.length; i += 5000) {
      const ids = created.slice(i, i + 5000).map((c) => c.id);
      for (const row of await world.sql<{ id: string; email_key: string | null }>(
        'select id, email_key from leads where org_id = $1 and project_id = $2 and id = any($3)',
        [world.api.orgId, projectId, ids],
      ))
        byId.set(row.id, row.email_key);
    }
    checks.push({
      promise: 'accepted lead creates are stored (id with its e-mail)',
      count: created.length,
      violations: created
        .filter((c) => byId.get(c.id) !== c.email.toLowerCase())
        .map((c) => `${c.id} ${c.email}: ${byId.has(c.id) ? `stored with ${byId.get(c.id)}` : 'not stored'}`),
    });

    // Every stored e-mail of the load, and how many leads hold it.
    const leadsOf = new Map<string, number>();
    for (const row of await world.sql<{ email_key: string; n: number }>(
      `select email_key, count(*)::int as n from leads where org_id = $1 and project_id = $2 and email_key like $3 group by email_key`,
      [world.api.orgId, projectId, `l-${run}-%@${DOMAIN}`],
    ))
      leadsOf.set(row.email_key, row.n);

    // Imports: every row's person is a lead, and the answer's counts add up (no valid row rejected).
    const importViolations: string[] = [];
    let rows = 0;
    imports.forEach((imp, k) => {
      rows += imp.rows;
      const missing = imp.emails.filter((e) => !leadsOf.has(e.toLowerCase()));
      for (const e of missing.slice(0, 20)) importViolations.push(`import ${k + 1}: ${e} not stored`);
      if (missing.length > 20) importViolations.push(`import ${k + 1}: ${missing.length - 20} more rows not stored`);
      if (imp.created + imp.merged + imp.rejected !== imp.rows || imp.rejected !== 0)
        importViolations.push(`import ${k + 1}: ${imp.rows} rows answered created ${imp.created}, merged ${imp.merged}, rejected ${imp.rejected}`);
    });
    checks.push({ promise: "accepted imports' rows are stored (by e-mail; counts add up)", count: rows, violations: importViolations });

    checks.push({
      promise: 'one lead per e-mail (de-duplication under concurrent creates and imports)',
      count: leadsOf.size,
      violations: [...leadsOf].filter(([, n]) => n > 1).map(([e, n]) => `${e}: ${n} leads`),
    });
    world.log(`leads: ${created.length} creates accepted, ${imports.length} imports (${rows} rows), ${sentEmails.size} e-mails sent, ${leadsOf.size} stored`);
    return checks;
  },
};
