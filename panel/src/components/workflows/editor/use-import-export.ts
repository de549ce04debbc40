/** Export of the workflow as a JSON file, and import of one (a step of its own: undo goes back). */
import { useRef, useState } from 'react';
import { docOf, fileOf, parseWorkflowFile } from '../canvas-model';
import type { EditorDoc } from './doc';

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'workflow';

export function useImportExport({ editor, setNotice, fitView }: { editor: EditorDoc; setNotice: (notice: string | null) => void; fitView: () => void }) {
  const { commit, doc, history } = editor;
  const fileInput = useRef<HTMLInputElement>(null);
  const [importError, setImportError] = useState<string | null>(null);
  const importFile = async (file: File) => {
    const parsed = parseWorkflowFile(await file.text());
    if (!parsed.ok) {
      setImportError(parsed.error);
      return;
    }
    setImportError(null);
    const value = parsed.value;
    commit((d) =>
      docOf(
        { nodes: value.nodes, edges: value.edges },
        {
          name: value.name ?? d.meta.name,
          description: value.description ?? d.meta.description,
          budgetUsd: value.budgetUsd === null || value.budgetUsd === undefined ? d.meta.budgetUsd : String(value.budgetUsd),
        },
      ),
    );
    setNotice(`Imported ${value.nodes.length} ${value.nodes.length === 1 ? 'step' : 'steps'} from ${file.name}: save to keep them (undo to go back).`);
    fitView();
  };
  const exportFile = () => download(`${slug(doc.meta.name)}.workflow.json`, `${JSON.stringify(fileOf(history.stable), null, 2)}\n`);
  return { fileInput, importError, importFile, exportFile };
}
