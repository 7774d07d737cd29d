import type { ArtificialVoiceDisclosure } from '../../../prisma/generated/client';
import { disclosureProblem } from './disclosure.rules';

/** `valid` is recomputed on every read: a stored text can stop passing when the rules change. */
export function disclosureView(d: ArtificialVoiceDisclosure) {
  return {
    text: d.text,
    source: d.source as 'api' | 'import' | 'migration',
    actor: d.actor,
    valid: disclosureProblem(d.text) === null,
    updated_at: d.updatedAt.toISOString(),
  };
}
