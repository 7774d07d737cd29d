import { z } from '../../lib/openapi';
import { CSV_IMPORT_LIMITS } from '../../lib/csv-import';
import { rejectedRowSchema } from '../suppressions/suppression.schemas';

export const ReassignedRejectedRow = rejectedRowSchema(['not_e164', 'bad_date', 'duplicate'], 'ReassignedRejectedRow');

export const ReassignedImportResult = z
  .object({
    received: z.number().int().openapi({ description: 'Data rows in the file (header, blank and # lines excluded)' }),
    accepted: z.number().int().openapi({ description: 'Distinct valid (number, date) pairs in the file' }),
    recorded: z.number().int().openapi({ description: 'Pairs newly stored by this upload (0 on a re-upload)' }),
    rejected_count: z.number().int().openapi({ description: 'All rejected rows' }),
    rejected: z
      .array(ReassignedRejectedRow)
      .openapi({ description: `The first ${CSV_IMPORT_LIMITS.maxRejectedListed} rejected rows, in file order` }),
  })
  .openapi('ReassignedNumbersImportResult');

export const ReassignedNumberSchema = z
  .object({
    phone_e164: z.string().openapi({ example: '+15551234567' }),
    disconnected_on: z.string().openapi({ format: 'date', description: 'Latest permanent disconnection reported for the number' }),
    source: z.string().openapi({ example: 'import' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('ReassignedNumber');

export const ReassignedLookupQuery = z.object({
  phone: z.string().openapi({
    param: { name: 'phone', in: 'query' },
    pattern: '^\\+[1-9]\\d{6,14}$',
    description: 'E.164 number (400 otherwise; a number its country\'s numbering plan cannot have is 422); send the plus sign as %2B (a literal + that arrives as a space is read as +)',
    example: '+15551234567',
  }),
});

export const ReassignedNumberList = z.object({ reassigned_numbers: z.array(ReassignedNumberSchema) });
