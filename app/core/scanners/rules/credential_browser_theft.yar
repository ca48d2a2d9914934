rule credential_browser_theft
{
    meta:
        id = "credential-browser-theft"
        description = "Reads browser profiles' saved logins, cookies or the key that decrypts them"
        severity = "high"
    strings:
        $chrome_win = /Google\\{1,2}Chrome\\{1,2}User Data/ nocase
        $chrome_linux = ".config/google-chrome" nocase
        $chrome_mac = "Application Support/Google/Chrome" nocase
        $edge = /Microsoft\\{1,2}Edge\\{1,2}User Data/ nocase
        $brave = "BraveSoftware" nocase
        $firefox = /Mozilla[\/\\]{1,2}Firefox[\/\\]{1,2}Profiles/ nocase
        $login_data = "Login Data"
        $cookies = /[\/\\]Network[\/\\]{1,2}Cookies|[\/\\]{1,2}Cookies["'\s]/
        $ff_logins = "logins.json"
        $ff_key = "key4.db"
        $local_state = "Local State"
        $dpapi = "CryptUnprotectData"
    condition:
        any of ($chrome_win, $chrome_linux, $chrome_mac, $edge, $brave, $firefox) and
        2 of ($login_data, $cookies, $ff_logins, $ff_key, $local_state, $dpapi)
}
