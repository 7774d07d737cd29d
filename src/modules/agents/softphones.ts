/**
 * Where a browser seat's softphone lives while the product runs with the embedded switch simulator
 * (CONTRACT section 10): the simulator plays the browser, registering the seat through the switch
 * directory at check-in and unregistering it at check-out. In production the browser does this
 * itself and no player is configured.
 */
export interface BrowserSoftphones {
  /** A browser seat checked in with a fresh ephemeral credential (the password is not kept beyond the softphone). */
  checkedIn(seat: { agentId: string; extension: string; domain: string | null; username: string; password: string; expiresAt: Date }): void;
  checkedOut(seat: { agentId: string; extension: string; domain: string | null }): void;
}
