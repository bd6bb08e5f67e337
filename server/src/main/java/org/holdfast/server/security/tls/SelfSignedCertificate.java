package org.holdfast.server.security.tls;

import java.math.BigInteger;
import java.net.InetAddress;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Makes the certificate a server without one presents: an EC P-256 key (fast handshakes, small
 * certificate), valid for ten years, for localhost, 127.0.0.1, ::1 and the host's names. Agents
 * trust it by its fingerprint, not by a CA, so its names matter only to an operator who passes the
 * certificate itself to {@code --ca-cert}.
 */
public final class SelfSignedCertificate {
    /** How long a made certificate is valid; agents pin it, so a renewal means re-pinning every agent. */
    public static final Duration VALIDITY = Duration.ofDays(3650);

    private SelfSignedCertificate() {
    }

    /** A new key and certificate for {@code extraHostNames} besides localhost and the local host's name. */
    public static ServerCertificate make(List<String> extraHostNames, String origin) {
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
            gen.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair pair = gen.generateKeyPair();
            Set<String> names = new LinkedHashSet<>();
            names.add("localhost");
            String local = localHostName();
            if (local != null) {
                names.add(local);
            }
            names.addAll(extraHostNames);
            List<GeneralName> sans = new ArrayList<>();
            sans.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
            sans.add(new GeneralName(GeneralName.iPAddress, "::1"));
            for (String n : names) {
                if (n == null || n.isBlank() || "0.0.0.0".equals(n) || "::".equals(n)) {
                    continue;
                }
                boolean ip = n.matches("[0-9.]+") || n.contains(":");
                sans.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, n));
            }
            X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                    .addRDN(BCStyle.O, "Holdfast")
                    .addRDN(BCStyle.CN, "Holdfast server " + (local == null ? "localhost" : local))
                    .build();
            Instant now = Instant.now();
            BigInteger serial = new BigInteger(127, new SecureRandom()).add(BigInteger.ONE);
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial,
                    Date.from(now.minus(Duration.ofDays(1))), Date.from(now.plus(VALIDITY)), subject, pair.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(pair.getPublic()));
            X509Certificate cert = new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
            return ServerCertificate.of(pair.getPrivate(), List.of(cert), origin, true);
        } catch (GeneralSecurityException | OperatorCreationException | java.io.IOException e) {
            throw new TlsSetupException("cannot make a self-signed certificate: " + e.getMessage()
                    + "; supply one with holdfast.tls.certificate and holdfast.tls.private-key", e);
        }
    }

    private static String localHostName() {
        try {
            String n = InetAddress.getLocalHost().getHostName();
            return n == null || n.isBlank() ? null : n;
        } catch (java.io.IOException | SecurityException e) {
            return null;
        }
    }
}
