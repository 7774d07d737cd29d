import { z } from '../../lib/openapi';
import { recordingFilterFields } from '../recordings/recording.schemas';
import { RecordingExportJobSchema } from './recording-export.views';

export const CreateRecordingExportBody = z
  .object({
    ...recordingFilterFields,
    refresh: z
      .boolean()
      .optional()
      .openapi({ description: 'true: always produce a new archive, even when an identical request finished inside the dedup window' }),
  })
  .strict()
  .openapi('RecordingExportRequest');
export type CreateRecordingExportInput = z.infer<typeof CreateRecordingExportBody>;

export const RecordingExportEnvelope = z.object({ export: RecordingExportJobSchema });

export const JobIdParam = z.object({
  job_id: z
    .string()
    .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/)
    .openapi({ param: { name: 'job_id', in: 'path' }, format: 'uuid' }),
});
