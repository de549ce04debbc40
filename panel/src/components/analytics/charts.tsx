import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatMetric, hasValues, metricSpec, type DayRow, type MetricKey } from './data';

export interface LineSpec {
  metric: MetricKey;
  color: string;
}

const axis = { fontSize: 12, fill: '#64748b' };

/** Positions close to their own range (a move from 8 to 7 is visible), never above 1, the top result. */
const POSITION_DOMAIN: [(min: number) => number, (max: number) => number] = [(min) => Math.max(1, Math.floor(min - 1)), (max) => Math.ceil(max + 1)];

/**
 * Daily lines of one or more metrics of the same kind (counts together; CTR and position each on
 * their own). A day not synced yet is a gap, not a zero; the average position's axis is reversed
 * (1 is the top of the results).
 */
export function DailyLines({ rows, lines, height = 'h-56' }: { rows: readonly DayRow[]; lines: readonly LineSpec[]; height?: string }) {
  if (
    !hasValues(
      rows,
      lines.map((l) => l.metric),
    )
  ) {
    return <div className={`flex ${height} items-center justify-center rounded-md bg-slate-50 text-sm text-slate-500`}>Nothing synced for these days yet.</div>;
  }
  const first = lines[0]!.metric;
  const kind = metricSpec(first)?.kind ?? 'count';
  const label = (key: string) => metricSpec(key)?.label ?? key;
  return (
    <div className={height} role="img" aria-label={`${lines.map((l) => label(l.metric)).join(' and ')} per day`}>
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={rows as DayRow[]} margin={{ top: 4, right: 12, bottom: 0, left: kind === 'ratio' ? 0 : -8 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
          <XAxis dataKey="label" tick={axis} tickLine={false} axisLine={{ stroke: '#cbd5e1' }} minTickGap={16} />
          <YAxis
            tick={axis}
            tickLine={false}
            axisLine={false}
            allowDecimals={kind !== 'count'}
            reversed={kind === 'position'}
            domain={kind === 'position' ? POSITION_DOMAIN : [0, 'auto']}
            tickFormatter={(v: number) =>
              kind === 'ratio' ? `${Math.round(v * 1000) / 10}%` : kind === 'position' ? String(Math.round(v * 10) / 10) : compactNumber(v)
            }
          />
          <Tooltip formatter={(value, name, item) => [formatMetric(String(item.dataKey ?? first), Number(value)), name]} />
          {lines.length > 1 ? <Legend wrapperStyle={{ fontSize: 12 }} /> : null}
          {lines.map((l) => (
            <Line
              key={l.metric}
              type="linear"
              dataKey={l.metric}
              name={label(l.metric)}
              stroke={l.color}
              strokeWidth={2}
              dot={rows.length <= 31 ? { r: 2.5 } : false}
              connectNulls={false}
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}

/** 1,200 → "1.2k" on an axis (the tooltip and the figures keep every digit). */
export function compactNumber(value: number): string {
  return new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}
