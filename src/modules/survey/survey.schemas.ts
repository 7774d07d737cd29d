import { z } from '../../lib/openapi';

/** Keys a caller can press, in the order the distribution lists them. */
export const DIGITS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#'] as const;

export const SurveyResultsQuery = z.object({
  from: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Start of the window (RFC 3339, inclusive); default: unbounded' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'End of the window (RFC 3339, exclusive); default: unbounded' }),
});

const count = (description: string) => z.number().int().min(0).openapi({ description });

const MenuResult = z
  .object({
    menu_path: z.string().openapi({ description: 'Keys that lead to this menu from the root; "" is the root menu (or a flat key map)', example: '1' }),
    presses: count('Keys pressed in this menu'),
    calls: count('Calls that pressed at least one key in this menu: the respondents of this question'),
    digits: z
      .record(z.string(), z.number().int())
      .openapi({ description: 'Presses per key (0-9, *, #); keys nobody pressed are left out', example: { '1': 12, '2': 5 } }),
    actions: z
      .record(z.string(), z.number().int())
      .openapi({ description: 'Presses per menu action (transfer_agent, optout, hangup, submenu); actions that never ran are left out', example: { submenu: 12 } }),
    unmatched: count('Presses of a key this menu has no entry for (no action ran)'),
  })
  .openapi('SurveyMenuResult');

export const SurveyResultsSchema = z
  .object({
    campaign_id: z.string().uuid(),
    from: z.string().nullable().openapi({ format: 'date-time', description: 'Start of the window as applied (inclusive); null = unbounded' }),
    to: z.string().nullable().openapi({ format: 'date-time', description: 'End of the window as applied (exclusive); null = unbounded' }),
    calls_answered: count('Original call rows of the campaign that were answered and started in the window'),
    calls_with_keypress: count('Calls with at least one key pressed in the window'),
    keypresses: count('Keys pressed in the window'),
    optouts: count('Calls on which an opt-out key was pressed in the window (each call once, however often the key was pressed)'),
    menus: z
      .array(MenuResult)
      .openapi({ description: 'One entry per menu with at least one press in the window: root first, then in key order (0-9, *, #), a depth-first walk of the menu tree' }),
  })
  .openapi('SurveyResults');
