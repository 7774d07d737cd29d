import type { ConsultFactor, DobFormat, EngineLanguage, Offer, TakePayments } from './engine.types';

/**
 * What the rule-based agent says, English and Spanish. Templates never take the consumer's words:
 * nothing the consumer says is echoed back verbatim (only amounts the engine has parsed and
 * recomputed), so a consumer cannot make the agent speak a phrase. Everything here still passes
 * the output guard.
 */

/** "$1,234.56", with the currency code after it when it is not USD. */
export function formatMoney(cents: number, currency: string): string {
  const whole = String(Math.floor(cents / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const suffix = currency && currency.toUpperCase() !== 'USD' ? ` ${currency.toUpperCase()}` : '';
  return `$${whole}.${String(cents % 100).padStart(2, '0')}${suffix}`;
}

export const MINI_MIRANDA: Readonly<Record<EngineLanguage, string>> = {
  en: 'This is an attempt to collect a debt; any information obtained will be used for that purpose.',
  es: 'Esto es un intento de cobrar una deuda; cualquier información obtenida se utilizará para ese fin.',
};

export interface Lines {
  identity(name: string | undefined): string;
  verifyPrompt(factor: ConsultFactor, length: number | null, format: DobFormat): string;
  verifyRetry: string;
  verified: string;
  verifyFailed: string;
  /** Verification disabled: identity confirmed by name only, so nothing about the matter is said. */
  identifiedOnly: string;
  personOrCallback: string;
  purpose: string;
  creditor(name: string): string;
  balance(money: string): string;
  status(status: string): string;
  minimumPayment(money: string): string;
  dueDate(date: string): string;
  last4(digits: string): string;
  nothingDue: string;
  offer(offer: Offer, money: (cents: number) => string): string;
  offerQuestion(take: TakePayments, offer: Offer): string;
  belowMinimum: string;
  tooManyMonths: string;
  bestOffer: string;
  notExposed: string;
  promised(offer: Offer, take: TakePayments, money: (cents: number) => string): string;
  refusalAck: string;
  noDeal: string;
  wrongParty: string;
  optOut: string;
  callback: string;
  disputeNoted: string;
  handoffOffer: string;
  handoffConfirm: string;
  transfer: string;
  continueAfterDecline: string;
  reprompt: string;
  noResponse: string;
  goodbye: string;
  wrapUp: string;
  ceiling: string;
}

function planText(lang: EngineLanguage, offer: Offer, money: (cents: number) => string): string {
  const months = offer.months!;
  const each = money(offer.installment_cents!);
  const last = offer.final_installment_cents!;
  if (last === offer.installment_cents) {
    return lang === 'en' ? `${months} monthly payments of ${each}` : `${months} pagos mensuales de ${each}`;
  }
  return lang === 'en'
    ? `${months - 1} monthly payments of ${each} and a final payment of ${money(last)}`
    : `${months - 1} pagos mensuales de ${each} y un último pago de ${money(last)}`;
}

const EN: Lines = {
  identity: (name) => (name ? `Am I speaking with ${name}?` : 'Am I speaking with the person this call is for?'),
  verifyPrompt: (factor, length, format) => {
    const intro = 'For your security, please tell me';
    switch (factor) {
      case 'account_last4':
        return `${intro} the last ${length ?? 4} digits of your account number.`;
      case 'ssn_last4':
        return `${intro} the last ${length ?? 4} digits of your Social Security number.`;
      case 'dob':
        return format === 'mmdd' ? `${intro} your date of birth, month and day.` : `${intro} your date of birth: month, day and year.`;
      case 'pin':
        return length ? `${intro} your ${length}-digit PIN.` : `${intro} your PIN.`;
      case 'zip':
        return `${intro} your ${length ?? 5}-digit ZIP code.`;
    }
  },
  verifyRetry: "That doesn't match our records. Let's try again.",
  verified: 'Thank you for confirming.',
  identifiedOnly: "Thank you. I'm not able to go over the details of this matter on this call.",
  personOrCallback: 'Would you like to speak with a person now? If now is not a good time, just say call me later and we will call you back.',
  verifyFailed: "I'm sorry, I wasn't able to verify your identity, so I can't continue this call. Thank you for your time. Goodbye.",
  purpose: "I'm calling about a personal business matter, and I first need to confirm I'm speaking with the right person.",
  creditor: (name) => `This call is on behalf of ${name}.`,
  balance: (money) => `Your current balance is ${money}.`,
  status: (status) => `Your account status is: ${status}.`,
  minimumPayment: (money) => `The minimum payment due is ${money}.`,
  dueDate: (date) => `The payment due date is ${date}.`,
  last4: (digits) => `This is about your account ending in ${digits}.`,
  nothingDue: 'Our records show no balance due at this time. Thank you for your time. Goodbye.',
  offer: (offer, money) => {
    switch (offer.kind) {
      case 'lump_sum':
        return offer.pct_of_balance >= 100
          ? `You can resolve this account with one payment of ${money(offer.amount_cents)}, the full balance.`
          : `We can settle this account for one payment of ${money(offer.amount_cents)}.`;
      case 'installments':
        return `You can pay the balance in ${planText('en', offer, money)}.`;
      case 'payment':
        return `We can take a payment of ${money(offer.amount_cents)} toward your balance; the rest of the balance stays due.`;
    }
  },
  offerQuestion: (take, offer) =>
    take === 'card_on_file'
      ? offer.kind === 'installments'
        ? 'Would you like to set that up on the card we have on file?'
        : 'Would you like to pay that with the card we have on file?'
      : 'Can you commit to that?',
  belowMinimum: "I'm sorry, that amount is below the minimum we can accept.",
  tooManyMonths: "I'm sorry, I can't offer a plan that long.",
  bestOffer: 'That is the best option I am able to offer.',
  notExposed: "I'm not able to share that detail on this call.",
  promised: (offer, take, money) => {
    const what = offer.kind === 'installments' ? planText('en', offer, money) : `a payment of ${money(offer.amount_cents)}`;
    return take === 'card_on_file'
      ? `Thank you. ${capitalize(what)} will be charged to the card on file, and you'll receive a confirmation.`
      : `Thank you. I've noted your promise to make ${what}.`;
  },
  refusalAck: 'I understand.',
  noDeal: "I understand. We weren't able to reach an arrangement today. Thank you for your time. Goodbye.",
  wrongParty: 'I apologize for the inconvenience. Goodbye.',
  optOut: "Understood. We'll stop calling this number. Goodbye.",
  callback: "Of course. We'll call you back at a better time. Goodbye.",
  disputeNoted: "I understand, and I've made a note of that.",
  handoffOffer: 'Would you like to speak with a person?',
  handoffConfirm: 'Just to confirm, would you like to speak with a person?',
  transfer: "I'll connect you with a representative now. Please hold.",
  continueAfterDecline: "All right, let's continue.",
  reprompt: "I'm sorry, I didn't catch that.",
  noResponse: "I'm sorry, I'm having trouble understanding. We'll try again another time. Goodbye.",
  goodbye: 'Thank you for your time. Goodbye.',
  wrapUp: "We're almost out of time for this call. We'll follow up with you another time. Thank you, goodbye.",
  ceiling: "We've reached the time limit for this call. Thank you, goodbye.",
};

const ES: Lines = {
  identity: (name) => (name ? `¿Hablo con ${name}?` : '¿Hablo con la persona a quien va dirigida esta llamada?'),
  verifyPrompt: (factor, length, format) => {
    const intro = 'Por su seguridad, dígame';
    switch (factor) {
      case 'account_last4':
        return `${intro} los últimos ${length ?? 4} dígitos de su número de cuenta.`;
      case 'ssn_last4':
        return `${intro} los últimos ${length ?? 4} dígitos de su número de Seguro Social.`;
      case 'dob':
        return format === 'mmdd' ? `${intro} su fecha de nacimiento: mes y día.` : `${intro} su fecha de nacimiento: mes, día y año.`;
      case 'pin':
        return length ? `${intro} su PIN de ${length} dígitos.` : `${intro} su PIN.`;
      case 'zip':
        return `${intro} su código postal de ${length ?? 5} dígitos.`;
    }
  },
  verifyRetry: 'Eso no coincide con nuestros registros. Intentemos de nuevo.',
  verified: 'Gracias por confirmar.',
  identifiedOnly: 'Gracias. No puedo tratar los detalles de este asunto en esta llamada.',
  personOrCallback: '¿Desea hablar ahora con una persona? Si no es buen momento, diga llámeme más tarde y le devolveremos la llamada.',
  verifyFailed: 'Lo siento, no pude verificar su identidad, así que no puedo continuar esta llamada. Gracias por su tiempo. Adiós.',
  purpose: 'Le llamo por un asunto personal de negocios, y primero necesito confirmar que hablo con la persona correcta.',
  creditor: (name) => `Esta llamada es en nombre de ${name}.`,
  balance: (money) => `Su saldo actual es de ${money}.`,
  status: (status) => `El estado de su cuenta es: ${status}.`,
  minimumPayment: (money) => `El pago mínimo es de ${money}.`,
  dueDate: (date) => `La fecha límite de pago es ${date}.`,
  last4: (digits) => `Se trata de su cuenta que termina en ${digits}.`,
  nothingDue: 'Nuestros registros no muestran saldo pendiente en este momento. Gracias por su tiempo. Adiós.',
  offer: (offer, money) => {
    switch (offer.kind) {
      case 'lump_sum':
        return offer.pct_of_balance >= 100
          ? `Puede resolver esta cuenta con un solo pago de ${money(offer.amount_cents)}, el saldo completo.`
          : `Podemos liquidar esta cuenta con un solo pago de ${money(offer.amount_cents)}.`;
      case 'installments':
        return `Puede pagar el saldo en ${planText('es', offer, money)}.`;
      case 'payment':
        return `Podemos recibir un pago de ${money(offer.amount_cents)} a su saldo; el resto del saldo sigue pendiente.`;
    }
  },
  offerQuestion: (take, offer) =>
    take === 'card_on_file'
      ? offer.kind === 'installments'
        ? '¿Desea programarlo con la tarjeta que tenemos registrada?'
        : '¿Desea pagarlo con la tarjeta que tenemos registrada?'
      : '¿Puede comprometerse a eso?',
  belowMinimum: 'Lo siento, esa cantidad es menor al mínimo que podemos aceptar.',
  tooManyMonths: 'Lo siento, no puedo ofrecer un plan tan largo.',
  bestOffer: 'Esa es la mejor opción que puedo ofrecerle.',
  notExposed: 'No puedo compartir ese dato en esta llamada.',
  promised: (offer, take, money) => {
    const what = offer.kind === 'installments' ? planText('es', offer, money) : `un pago de ${money(offer.amount_cents)}`;
    return take === 'card_on_file'
      ? `Gracias. Se cargará ${what} a la tarjeta registrada, y recibirá una confirmación.`
      : `Gracias. He registrado su compromiso de hacer ${what}.`;
  },
  refusalAck: 'Entiendo.',
  noDeal: 'Entiendo. No pudimos llegar a un acuerdo hoy. Gracias por su tiempo. Adiós.',
  wrongParty: 'Disculpe la molestia. Adiós.',
  optOut: 'Entendido. Dejaremos de llamar a este número. Adiós.',
  callback: 'Por supuesto. Le llamaremos en un mejor momento. Adiós.',
  disputeNoted: 'Entiendo, y he tomado nota de eso.',
  handoffOffer: '¿Le gustaría hablar con una persona?',
  handoffConfirm: 'Para confirmar, ¿desea hablar con una persona?',
  transfer: 'Le comunico con un representante ahora. Por favor espere.',
  continueAfterDecline: 'Muy bien, continuemos.',
  reprompt: 'Disculpe, no le entendí.',
  noResponse: 'Lo siento, tengo problemas para entenderle. Lo intentaremos en otro momento. Adiós.',
  goodbye: 'Gracias por su tiempo. Adiós.',
  wrapUp: 'Se nos acaba el tiempo de esta llamada. Nos comunicaremos con usted en otro momento. Gracias, adiós.',
  ceiling: 'Llegamos al límite de tiempo de esta llamada. Gracias, adiós.',
};

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export const SCRIPT: Readonly<Record<EngineLanguage, Lines>> = { en: EN, es: ES };
