import { useState } from 'react';
import { useMutation, useQueries } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { mediaQuery, uploadMedia } from '../../queries/content';

export interface MediaItem {
  id: string;
  url: string;
  contentType: string;
}

/**
 * A post's images: thumbnails of those attached (their URLs from the media API), an upload field and
 * a remove button each. Posts publish images only (the API refuses video on a post); X takes four.
 */
export function useMediaItems(orgId: string, mediaIds: string[]): MediaItem[] {
  const results = useQueries({ queries: mediaIds.map((id) => mediaQuery(orgId, id)) });
  return results.flatMap((r) => (r.data ? [{ id: r.data.id, url: r.data.url, contentType: r.data.contentType }] : []));
}

export function MediaPicker({
  orgId,
  projectId,
  mediaIds,
  max,
  disabled,
  onChange,
}: {
  orgId: string;
  projectId?: string;
  mediaIds: string[];
  max: number;
  disabled?: boolean;
  onChange: (mediaIds: string[]) => void;
}) {
  const items = useMediaItems(orgId, mediaIds);
  const [inputKey, setInputKey] = useState(0);
  const upload = useMutation({
    mutationFn: (file: File) => uploadMedia(orgId, file, projectId),
    onSuccess: (media) => onChange([...mediaIds, media.id]),
    onSettled: () => setInputKey((k) => k + 1),
  });
  const full = mediaIds.length >= max;
  const problem =
    upload.error instanceof ApiError
      ? upload.error.status === 415
        ? 'That file is not an image or video.'
        : upload.error.status === 413
          ? 'That file is too large.'
          : upload.error.message
      : upload.error
        ? String(upload.error)
        : null;
  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium text-slate-700">
        Images{' '}
        <span className="font-normal text-slate-500">
          ({mediaIds.length} of at most {max})
        </span>
      </legend>
      {mediaIds.length ? (
        <ul aria-label="Attached images" className="flex flex-wrap gap-2">
          {mediaIds.map((id, index) => {
            const item = items.find((m) => m.id === id);
            return (
              <li key={id} className="relative size-24 overflow-hidden rounded-md bg-slate-100 ring-1 ring-slate-200">
                {item ? (
                  <img src={item.url} alt={`Image ${index + 1}`} className="size-full object-cover" />
                ) : (
                  <span className="block p-2 text-xs text-slate-500">Loading…</span>
                )}
                {disabled ? null : (
                  <button
                    type="button"
                    aria-label={`Remove image ${index + 1}`}
                    onClick={() => onChange(mediaIds.filter((m) => m !== id))}
                    className="absolute top-1 right-1 rounded-full bg-white/90 px-1.5 text-xs text-slate-700 shadow hover:bg-white"
                  >
                    ✕
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      ) : null}
      {disabled ? null : (
        <div className="flex items-center gap-3">
          <label
            className={`inline-flex cursor-pointer items-center rounded-md px-3 py-1.5 text-sm font-medium ring-1 ring-slate-300 hover:bg-slate-50 focus-within:ring-2 focus-within:ring-indigo-600 ${full || upload.isPending ? 'cursor-not-allowed opacity-50' : ''}`}
          >
            {upload.isPending ? 'Uploading…' : 'Add image'}
            <input
              key={inputKey}
              type="file"
              accept="image/*"
              className="sr-only"
              disabled={full || upload.isPending}
              onChange={(e) => {
                const file = e.target.files?.[0];
                if (file) upload.mutate(file);
              }}
            />
          </label>
          {full ? <span className="text-xs text-slate-500">This platform takes at most {max}.</span> : null}
        </div>
      )}
      {problem ? (
        <p role="alert" className="text-sm text-red-600">
          Upload failed: {problem}
        </p>
      ) : null}
    </fieldset>
  );
}
