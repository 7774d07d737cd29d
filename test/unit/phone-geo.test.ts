import { numberGeo } from '../../src/lib/phone-geo';

describe('numberGeo area-code state', () => {
  it.each([
    ['+12065550123', 'WA'],
    ['+15095550123', 'WA'],
    ['+14255550123', 'WA'],
    ['+14155550123', 'CA'],
    ['+12125550123', 'NY'],
  ])('%s is in %s', async (e164, state) => {
    expect((await numberGeo(e164)).areaCodeState).toBe(state);
  });
});
