-- The provider account's own API credential, for a tenant's (sede) or account-wide (empresa) SMS
-- provider. Write-only and encrypted at rest like webhook_secret_ciphertext. A provider with its
-- own base_url is authenticated with this key alone: the deployment's key (SMS_PROVIDER_API_KEY)
-- goes only to the deployment's endpoint. The table's existing RLS policy and grants cover the column.
ALTER TABLE sms_providers ADD COLUMN api_key_ciphertext text;
