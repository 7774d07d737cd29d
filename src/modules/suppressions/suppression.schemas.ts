import { z } from '../../lib/openapi';
import { CSV_IMPORT_LIMITS } from '../../lib/csv-import';
import { MAX_REASON_CHARS } from './suppression.rules';

/** The request body as documented (the route streams it; nothing validates it as a string). */
export const CsvBody = z.string().openapi({ format: 'binary', description: 'CSV text, UTF-8' });

export function rejectedRowSchema<T extends [string, ...string[]]>(reasons: T, name: string) {
  return z
    .object({
      line: z.number().int().openapi({ description: '1-based line of the file on which the row starts' }),
      value: z.string().openapi({ description: 'The first cell, masked to its last 4 characters', example: '***4567' }),
      reason: z.enum(reasons),
    })
    .openapi(name);
}

export const SuppressionRejectedRow = rejectedRowSchema(['not_e164', 'duplicate'], 'SuppressionRejectedRow');

export const SuppressionImportResult = z
  .object({
    received: z.number().int().openapi({ description: 'Data rows in the file (header, blank and # lines excluded)' }),
    accepted: z.number().int().openapi({ description: 'Distinct valid numbers in the file' }),
    recorded: z.number().int().openapi({ description: 'Numbers newly listed by this upload (0 on a re-upload)' }),
    rejected_count: z.number().int().openapi({ description: 'All rejected rows' }),
    rejected: z
      .array(SuppressionRejectedRow)
      .openapi({ description: `The first ${CSV_IMPORT_LIMITS.maxRejectedListed} rejected rows, in file order` }),
    reasons_truncated: z
      .number()
      .int()
      .openapi({ description: `Accepted rows whose reason was longer than ${MAX_REASON_CHARS} characters and was cut to ${MAX_REASON_CHARS}` }),
  })
  .openapi('SuppressionImportResult');
