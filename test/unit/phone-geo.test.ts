import { numberGeo } from '../../src/lib/phone-geo';

describe('numberGeo area-code state', () => {
  it.each([
    ['+12065550123', 'WA'],
    ['+15095550123', 'WA'],
    ['+14255550123', 'WA'],
    ['+14155550123', 'CA'],
    ['+12125550123', 'NY'],
    // Territories: their own jurisdiction (no state's caps), not "nowhere" (every cap).
    ['+16715550123', 'GU'],
    ['+17875550123', 'PR'],
    ['+13405550123', 'VI'],
    ['+16705550123', 'MP'],
    ['+16845550123', 'AS'],
  ])('%s is in %s', async (e164, state) => {
    expect((await numberGeo(e164)).areaCodeState).toBe(state);
  });
});

describe('numberGeo outside the US', () => {
  it('places a London number in no US jurisdiction', async () => {
    expect((await numberGeo('+442079460123')).areaCodeState).toBeNull();
  });
});
