/**
 * Lexicon data of the rule-based engine, English and Spanish side by side: a consumer may answer
 * in either language whatever the agent speaks, so the classifier always reads both. Entries are
 * written folded (lowercase, no accents); multi-word entries match as whole consecutive words.
 */

export const YES = [
  'yes', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'correct', 'right', 'that is right', "that's right",
  'that is me', "that's me", 'this is me', 'it is me', "it's me", 'speaking', 'of course', 'alright', 'all right',
  'agreed', 'deal', 'sounds good', 'fine', 'go ahead', 'please do', 'i agree', 'i accept', 'i can do that',
  'si', 'claro', 'correcto', 'de acuerdo', 'vale', 'soy yo', 'el habla', 'ella habla', 'con el habla',
  'con ella habla', 'exacto', 'afirmativo', 'por supuesto', 'esta bien', 'acepto', 'hagamoslo', 'adelante',
];

export const NO = [
  'no', 'nope', 'nah', 'not really', 'negative', 'no thanks', 'no thank you', 'not interested', "i don't think so",
  'i do not think so', 'no gracias', 'para nada', 'tampoco', 'no me interesa', 'no quiero',
];

export const WRONG_PARTY = [
  'wrong number', 'wrong person', 'not me', "that's not me", 'that is not me', 'you have the wrong',
  'no one by that name', 'nobody by that name', 'no one here by that name', "doesn't live here", 'does not live here',
  "don't know who", 'do not know who', "don't know that person", 'do not know that person', 'never heard of',
  'numero equivocado', 'se equivoco de numero', 'se equivoco de persona', 'persona equivocada', 'no soy yo',
  'no vive aqui', 'aqui no vive', 'no conozco a esa persona', 'no conozco a nadie', 'nadie con ese nombre',
  'equivocado de numero',
];

export const OPT_OUT = [
  'stop calling', 'stop call', 'do not call', "don't call", 'dont call', 'never call', 'remove my number',
  'take me off', 'take my number off', 'stop contacting', 'do not contact', "don't contact", 'opt out', 'unsubscribe',
  'put me on your do not call', 'no me llame', 'no me llamen', 'no me vuelva a llamar', 'no me vuelvan a llamar',
  'deje de llamar', 'dejen de llamar', 'deje de llamarme', 'dejen de llamarme', 'no vuelva a llamar',
  'no vuelvan a llamar', 'borre mi numero', 'borren mi numero', 'quiteme de la lista', 'quitenme de la lista',
  'no me contacten',
];

export const CALLBACK = [
  'call me later', 'call back later', 'call me back', 'call back', 'call me tomorrow', 'call me another time',
  'call another time', 'not a good time', 'bad time', 'busy right now', "i'm busy", 'i am busy', "can't talk now",
  'cannot talk now', "can't talk right now", 'llame mas tarde', 'llameme mas tarde', 'llamame mas tarde',
  'llameme luego', 'vuelva a llamar mas tarde', 'mas tarde', 'otro momento', 'otro dia', 'ahora no puedo hablar',
  'no puedo hablar ahora', 'estoy ocupado', 'estoy ocupada', 'llameme manana',
];

export const DISPUTE = [
  'not my debt', "don't owe", 'do not owe', 'dont owe', 'dispute', 'disputing', 'already paid', 'i paid this',
  'i paid it', 'paid it off', 'never had', 'not mine', 'fraud', 'identity theft', 'no es mi deuda', 'no debo',
  'ya pague', 'disputa', 'disputar', 'disputo', 'fraude', 'robo de identidad', 'no reconozco', 'no es mia',
];

export const REFUSAL = [
  "won't pay", 'will not pay', 'not going to pay', 'not paying', 'refuse to pay', 'not gonna pay',
  "i'm not paying", 'never pay', 'no voy a pagar', 'no pienso pagar', 'me niego a pagar', 'no quiero pagar',
  'nunca voy a pagar', 'no pagare',
];

/** Pushing for a lower offer or saying the current one does not work: escalate. */
export const DECLINE_OFFER = [
  "can't afford", 'cannot afford', 'cant afford', 'too much', 'too high', 'lower', 'less', 'cheaper',
  'better deal', 'do better', 'any discount', 'discount', "can't do that", 'cannot do that', "can't pay that",
  'no puedo', 'es mucho', 'es demasiado', 'muy alto', 'menos', 'mas bajo', 'rebaja', 'descuento', 'mas barato',
];

export const ASK_PURPOSE = [
  'who is this', 'who is calling', "who's calling", 'what is this about', "what's this about", 'what is this regarding',
  'why are you calling', 'what do you want', 'quien es', 'quien habla', 'quien llama', 'de que se trata',
  'para que llama', 'por que llama', 'que quiere',
];

export const ASK_BALANCE = [
  'how much do i owe', 'how much is it', 'what is the balance', "what's the balance", 'what do i owe',
  'how much', 'cuanto debo', 'cuanto es', 'cual es el saldo', 'que debo', 'cuanto',
];

/** Verbs that address the request ("speak to ..."), then who it is addressed to. */
export const HUMAN_VERBS = [
  'speak to', 'speak with', 'talk to', 'talk with', 'transfer me to', 'connect me to', 'connect me with',
  'put me through to', 'get me', 'let me speak', 'let me talk', 'hablar con', 'comunicarme con', 'comuniqueme con',
  'paseme con', 'pasame con', 'pase con', 'transfierame con', 'transfierame a', 'quiero hablar con',
];

export const HUMAN_NOUNS = [
  'person', 'human', 'agent', 'representative', 'rep', 'operator', 'someone', 'somebody', 'supervisor', 'manager',
  'real person', 'live person', 'live agent', 'persona', 'humano', 'agente', 'representante', 'operador',
  'operadora', 'alguien', 'supervisora', 'gerente', 'ser humano', 'persona real',
];

/** Requests that need no verb: a bare "operator!" or "representante". */
export const HUMAN_STANDALONE = [
  'operator', 'representative', 'real person', 'live person', 'live agent', 'human please', 'a human',
  'operador', 'operadora', 'representante', 'persona real', 'un humano', 'una persona por favor',
];

/** Words that, a few words before a human request, turn it around ("I don't want to talk to anyone"). */
export const REQUEST_NEGATIONS = ["don't", 'dont', 'do not', 'not', 'never', 'no', 'nunca', 'ni'];

/** Sentiment scores per folded word; a negation within two words before flips the sign. */
export const SENTIMENT: Readonly<Record<string, number>> = {
  hate: -3, angry: -2, furious: -3, upset: -2, annoyed: -2, ridiculous: -2, stupid: -3, terrible: -3, awful: -3,
  worst: -3, scam: -3, scammers: -3, harass: -3, harassing: -3, harassment: -3, sick: -2, tired: -1, frustrated: -2,
  frustrating: -2, liar: -3, liars: -3, useless: -2, bad: -1, disgusting: -3, unfair: -2, sucks: -2, idiot: -3,
  idiots: -3, shit: -3, damn: -2, fuck: -4, fucking: -4, crap: -2, pissed: -3, mad: -2, hell: -2, annoying: -2,
  horrible: -3, outrageous: -3, threatening: -2,
  odio: -3, enojado: -2, enojada: -2, furioso: -3, furiosa: -3, molesto: -2, molesta: -2, ridiculo: -2,
  estupido: -3, estupida: -3, peor: -2, estafa: -3, estafadores: -3, acoso: -3, acosando: -3, harto: -2,
  harta: -2, cansado: -1, cansada: -1, frustrado: -2, frustrada: -2, mentiroso: -3, mentirosos: -3, inutil: -2,
  malo: -1, mala: -1, injusto: -2, idiota: -3, mierda: -3, carajo: -2, pendejo: -4, chingada: -4, maldito: -3,
  maldita: -3, fastidio: -2,
  thanks: 1, thank: 1, great: 2, good: 1, happy: 2, appreciate: 2, helpful: 2, glad: 2, perfect: 1,
  gracias: 1, bien: 1, genial: 2, excelente: 2, perfecto: 1, contento: 2, contenta: 2, amable: 2,
};

export const SENTIMENT_NEGATIONS = new Set(['not', 'no', 'never', "isn't", "wasn't", "don't", "doesn't", 'nunca', 'ni']);

export const DIGIT_WORDS: Readonly<Record<string, string>> = {
  zero: '0', one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9',
  cero: '0', uno: '1', dos: '2', tres: '3', cuatro: '4', cinco: '5', seis: '6', siete: '7', ocho: '8', nueve: '9',
};

export const MONTH_NAMES: Readonly<Record<string, number>> = {
  january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6, july: 7,
  jul: 7, august: 8, aug: 8, september: 9, sep: 9, sept: 9, october: 10, oct: 10, november: 11, nov: 11,
  december: 12, dec: 12,
  enero: 1, febrero: 2, marzo: 3, abril: 4, mayo: 5, junio: 6, julio: 7, agosto: 8, septiembre: 9, setiembre: 9,
  octubre: 10, noviembre: 11, diciembre: 12,
};

/** Words after a number that make it money. */
export const CURRENCY_WORDS = ['dollars', 'dollar', 'bucks', 'usd', 'dolares', 'dolar', 'pesos', 'peso', 'mxn'];

/** Words before a bare number that make it money ("I can pay 50", "puedo pagar 50"). */
export const PAY_VERBS = ['pay', 'paying', 'give', 'offer', 'send', 'pagar', 'pago', 'pagaria', 'dar', 'ofrecer', 'mandar'];

export const MONTH_UNITS = [
  'months', 'month', 'monthly payments', 'payments', 'installments', 'meses', 'mes', 'pagos', 'cuotas',
  'mensualidades', 'plazos',
];

/** Words after an amount that make it a monthly amount. */
export const PER_MONTH = [
  'a month', 'per month', 'monthly', 'each month', 'every month', 'al mes', 'por mes', 'mensual', 'mensuales',
  'cada mes', 'mensualmente',
];

/**
 * Built-in FDCPA guard (15 U.S.C. 1692d, 1692e): threats of arrest or jail, of suing (never said,
 * true or not), of garnishment or seizure, criminal framing, and profanity; card-detail requests
 * (an automated agent never takes card numbers). Regular expressions over folded, spaced text.
 */
export const FDCPA_PROHIBITED: readonly RegExp[] = [
  /\barrest\w*/, /\bjail\w*/, /\bprison\w*/, /\bpolice\b/, /\bsheriff\b/, /\bwarrant\w*/, /\bcriminal\w*/,
  /\bcrime\w*/, /\bsu(e|ed|es|ing)\b/, /\blawsuit\w*/, /\blegal action\b/, /\bcourt\b/, /\battorney\w*/,
  /\blawyer\w*/, /\bgarnish\w*/, /\bseiz\w*/, /\brepossess\w*/, /\bdeport\w*/, /\bprosecut\w*/,
  /\bcarcel\w*/, /\bprision\b/, /\bpolicia\w*/, /\bdemand(a|ar|aremos|arle|arlo|arla)\b/,
  /\bjuicio\w*/, /\btribunal\w*/, /\babogad\w*/, /\bembarg\w*/, /\bdelito\w*/, /\bdetenid\w*/,
  /\bfuck\w*/, /\bshit\w*/, /\bdamn\w*/, /\bbitch\w*/, /\basshole\w*/, /\bbastard\w*/, /\bcrap\b/, /\bidiot\w*/,
  /\bstupid\b/, /\bmierda\b/, /\bcarajo\b/, /\bpendej\w*/, /\bputa\w*/, /\bcabron\w*/, /\bjoder\b/, /\bchinga\w*/,
  /\bidiota\w*/, /\bestupid\w*/,
];

export const CARD_DETAILS: readonly RegExp[] = [
  /\bcard number\b/, /\bcvv\b/, /\bcvc\b/, /\bsecurity code\b/, /\bexpiration date\b/, /\bexpiry\b/,
  /\bnumero de (la )?tarjeta\b/, /\bcodigo de seguridad\b/, /\bfecha de (vencimiento|expiracion)\b/,
];

/** Any mention of a card: refused outright when the policy takes no payments. */
export const CARD_MENTION: readonly RegExp[] = [/\bcards?\b/, /\btarjetas?\b/];
