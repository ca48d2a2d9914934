rule crypto_miner
{
    meta:
        id = "crypto-miner"
        description = "Cryptocurrency miner: stratum pool URL, xmrig, known mining pools or a Monero wallet"
        severity = "high"
    strings:
        $stratum = /stratum\+(tcp|ssl|tls):\/\// nocase wide ascii
        $xmrig = "xmrig" nocase wide ascii
        $donate = "--donate-level" wide ascii
        $pool = /(supportxmr\.com|minexmr\.com|nanopool\.org|moneroocean\.stream|2miners\.com|f2pool\.com|hashvault\.pro|c3pool\.com|herominers\.com|unmineable\.com|nicehash\.com|ethermine\.org|xmrpool\.eu|minergate\.com|viabtc\.com|antpool\.com)/ nocase wide ascii
        $algo = /\b(randomx|cryptonight|ethash|kawpow)\b/ nocase wide ascii
        $wallet_cli = /--user[\s=]+["']?4[0-9AB][1-9A-HJ-NP-Za-km-z]{93}\b/ wide ascii
        $wallet_json = /"user"\s*:\s*"4[0-9AB][1-9A-HJ-NP-Za-km-z]{93}"/ wide ascii
    condition:
        $stratum or $xmrig or $donate or $pool or ($algo and ($wallet_cli or $wallet_json))
}
