rule credential_browser_theft
{
    meta:
        id = "credential-browser-theft"
        description = "Reads browser profiles' saved logins, cookies or the key that decrypts them"
        severity = "high"
    strings:
        $chrome_win = /Google\\{1,2}Chrome\\{1,2}User Data/ nocase wide ascii
        $chrome_linux = ".config/google-chrome" nocase wide ascii
        $chrome_mac = "Application Support/Google/Chrome" nocase wide ascii
        $edge = /Microsoft\\{1,2}Edge\\{1,2}User Data/ nocase wide ascii
        $brave = "BraveSoftware" nocase wide ascii
        $firefox = /Mozilla[\/\\]{1,2}Firefox[\/\\]{1,2}Profiles/ nocase wide ascii
        $login_data = "Login Data" wide ascii
        $cookies = /[\/\\]Network[\/\\]{1,2}Cookies|[\/\\]{1,2}Cookies["'\s]/ wide ascii
        $ff_logins = "logins.json" wide ascii
        $ff_key = "key4.db" wide ascii
        $local_state = "Local State" wide ascii
        $dpapi = "CryptUnprotectData" wide ascii
    condition:
        any of ($chrome_win, $chrome_linux, $chrome_mac, $edge, $brave, $firefox) and
        2 of ($login_data, $cookies, $ff_logins, $ff_key, $local_state, $dpapi)
}
