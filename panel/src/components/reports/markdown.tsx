/**
 * A report's body is short markdown written by an agent: headings, bullet lists and paragraphs.
 * Shown as those elements (React escapes the text; no HTML from the body is ever rendered).
 */
export type Block = { kind: 'heading'; level: 3 | 4; text: string } | { kind: 'list'; items: string[] } | { kind: 'paragraph'; text: string };

export function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) out.push({ kind: 'paragraph', text: paragraph.join(' ') });
    paragraph = [];
  };
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trim();
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^[-*+]\s+(.*)$/.exec(line) ?? /^\d+[.)]\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      // The page holds h1 and h2: a body's own headings sit under them.
      out.push({ kind: 'heading', level: heading[1]!.length <= 2 ? 3 : 4, text: heading[2]! });
    } else if (item) {
      flush();
      const last = out[out.length - 1];
      if (last?.kind === 'list') last.items.push(item[1]!);
      else out.push({ kind: 'list', items: [item[1]!] });
    } else if (line === '') {
      flush();
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return out;
}

/** `**bold**` and `` `code` `` inside a line; everything else is plain text. */
function Inline({ text }: { text: string }) {
  const parts = text.split(/(\*\*[^*]+\*\*|`[^`]+`)/g).filter(Boolean);
  return (
    <>
      {parts.map((part, i) =>
        part.startsWith('**') && part.endsWith('**') && part.length > 4 ? (
          <strong key={i}>{part.slice(2, -2)}</strong>
        ) : part.startsWith('`') && part.endsWith('`') && part.length > 2 ? (
          <code key={i} className="rounded bg-slate-100 px-1 text-xs">
            {part.slice(1, -1)}
          </code>
        ) : (
          <span key={i}>{part}</span>
        ),
      )}
    </>
  );
}

export function Markdown({ text }: { text: string }) {
  return (
    <div className="space-y-3 text-sm text-slate-800">
      {blocks(text).map((block, i) => {
        if (block.kind === 'heading') {
          const Tag = block.level === 3 ? 'h3' : 'h4';
          return (
            <Tag key={i} className="pt-1 font-semibold text-slate-900">
              <Inline text={block.text} />
            </Tag>
          );
        }
        if (block.kind === 'list')
          return (
            <ul key={i} className="list-disc space-y-1 pl-5">
              {block.items.map((item, j) => (
                <li key={j}>
                  <Inline text={item} />
                </li>
              ))}
            </ul>
          );
        return (
          <p key={i}>
            <Inline text={block.text} />
          </p>
        );
      })}
    </div>
  );
}
