-- CDR reads fill each row's recording_uri from the call's recording (the CDR is append-only and its
-- final row is written before the audio is captured): looked up by the original attempt's id.
CREATE INDEX recordings_call_attempt_idx ON recordings (call_attempt_id);
