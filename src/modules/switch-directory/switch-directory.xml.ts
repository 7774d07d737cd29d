/**
 * The FreeSWITCH XML documents the directory answers (mod_xml_curl's `directory` binding). Pure.
 */

const escapeXml = (v: string): string => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

const param = (name: string, value: string, tag = 'param') => `<${tag} name="${escapeXml(name)}" value="${escapeXml(value)}"/>`;

/** What FreeSWITCH reads as "no such entry" (it then answers the softphone 403 / the dial USER_NOT_REGISTERED). */
export const NOT_FOUND_XML =
  '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<document type="freeswitch/result">\n  <section name="result">\n    <result status="not found"/>\n  </section>\n</document>\n';

export interface DirectoryUser {
  /** The domain the request asked about (echoed: FreeSWITCH matches the answer's domain by name). */
  domain: string;
  /** The ephemeral credential's username: the digest user name the softphone authenticates with. */
  username: string;
  /** The seat's extension: the address-of-record user the softphone registers and the dialer dials. */
  extension: string;
  password: string;
}

/**
 * One user of one domain. `number-alias` makes the seat's extension find the same entry (the dialer
 * dials `user/<extension>@<domain>`); the registration itself is stored under the extension (the
 * REGISTER's To user), which the stock dial-string's `sofia_contact(${dialed_user}@${dialed_domain})`
 * finds.
 */
export function userXml(u: DirectoryUser): string {
  return [
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
    '<document type="freeswitch/xml">',
    '  <section name="directory">',
    `    <domain name="${escapeXml(u.domain)}">`,
    '      <params>',
    `        ${param('dial-string', '{presence_id=${dialed_user}@${dialed_domain}}${sofia_contact(${dialed_user}@${dialed_domain})}')}`,
    '      </params>',
    '      <users>',
    `        <user id="${escapeXml(u.username)}" number-alias="${escapeXml(u.extension)}">`,
    '          <params>',
    `            ${param('password', u.password)}`,
    '          </params>',
    '          <variables>',
    `            ${param('user_context', 'default', 'variable')}`,
    '          </variables>',
    '        </user>',
    '      </users>',
    '    </domain>',
    '  </section>',
    '</document>',
    '',
  ].join('\n');
}
