import { z } from '../../lib/openapi';
import type { SignedUrl } from '../../lib/object-store';

export interface RecordingExportRow {
  id: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  filters: Record<string, string>;
  filter_hash: string;
  row_count: number | null;
  storage_key: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export const EXPORT_COLUMNS = 'id, status, filters, filter_hash, row_count, storage_key, error, created_at, updated_at';

export const RecordingExportJobSchema = z
  .object({
    job_id: z.string().openapi({ format: 'uuid' }),
    status: z.enum(['queued', 'running', 'done', 'failed']),
    url: z.string().nullable().openapi({ description: 'Signed archive URL, freshly signed on every read; only when done' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time', description: 'When url stops working; null without url' }),
    row_count: z.number().int().nullable().openapi({ description: 'Recordings in the archive (at most 50000); null until done' }),
    error: z.string().nullable().openapi({ description: 'Why a failed job failed (for example "stale claim released")' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('RecordingExportJob');

export type RecordingExportJob = z.infer<typeof RecordingExportJobSchema>;

export function exportJobView(row: RecordingExportRow, signed: SignedUrl | null): RecordingExportJob {
  return {
    job_id: row.id,
    status: row.status,
    url: signed?.url ?? null,
    expires_at: signed?.expires_at ?? null,
    row_count: row.row_count,
    error: row.error,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
